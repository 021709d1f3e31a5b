/// How Lifeline reads meaning into signpost names (DOMAIN.md §5): MetricKit only counts
/// signposts, so "a background-task expiration handler was entered/exited" and "a state
/// restoration was attempted/failed" are naming conventions, configurable per deployment.
package struct SignpostConventions: Sendable, Equatable, Codable {
    /// A pair of name suffixes marking entry into and exit from an expiration handler.
    package struct HandlerPattern: Sendable, Equatable, Codable {
        package var entered: String
        package var exited: String

        package init(entered: String, exited: String) {
            self.entered = entered
            self.exited = exited
        }
    }

    /// Suffix pairs, tried in order: `<Handler>Entered`/`<Handler>Exited`,
    /// `<Handler>.enter`/`<Handler>.exit`, `<Handler>Begin`/`<Handler>End`.
    package var handlerPatterns: [HandlerPattern] = [
        .init(entered: "Entered", exited: "Exited"),
        .init(entered: ".enter", exited: ".exit"),
        .init(entered: "Begin", exited: "End"),
    ]
    /// Only signposts of these categories are handler candidates; empty means any category.
    package var handlerCategories: [String] = []
    /// Category of the state-restoration signposts.
    package var restorationCategory = "StateRestoration"
    /// Name of the restoration attempt signpost (an interval: its durations give restoration times).
    package var restorationAttempt = "RestoreAttempt"
    /// Name of the restoration failure signpost.
    package var restorationFailure = "RestoreFailed"

    package init() {}

    enum CodingKeys: String, CodingKey {
        case handlerPatterns = "handler_patterns"
        case handlerCategories = "handler_categories"
        case restorationCategory = "restoration_category"
        case restorationAttempt = "restoration_attempt"
        case restorationFailure = "restoration_failure"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SignpostConventions()
        handlerPatterns = try c.decodeIfPresent([HandlerPattern].self, forKey: .handlerPatterns) ?? d.handlerPatterns
        handlerCategories = try c.decodeIfPresent([String].self, forKey: .handlerCategories) ?? d.handlerCategories
        restorationCategory = try c.decodeIfPresent(String.self, forKey: .restorationCategory) ?? d.restorationCategory
        restorationAttempt = try c.decodeIfPresent(String.self, forKey: .restorationAttempt) ?? d.restorationAttempt
        restorationFailure = try c.decodeIfPresent(String.self, forKey: .restorationFailure) ?? d.restorationFailure
    }

    /// Which side of a handler a signpost marks.
    package enum HandlerSide: Sendable, Equatable {
        case entered
        case exited
    }

    /// The handler a signpost name belongs to, and which side it marks; `nil` when the name
    /// follows no pattern (or the category is not a handler category). A bare suffix
    /// (`"Entered"`) names no handler.
    package func handler(category: String, name: String) -> (handler: String, side: HandlerSide)? {
        guard handlerCategories.isEmpty || handlerCategories.contains(category) else { return nil }
        for pattern in handlerPatterns {
            if name.hasSuffix(pattern.entered), name.count > pattern.entered.count {
                return (String(name.dropLast(pattern.entered.count)), .entered)
            }
            if name.hasSuffix(pattern.exited), name.count > pattern.exited.count {
                return (String(name.dropLast(pattern.exited.count)), .exited)
            }
        }
        return nil
    }

    /// Problems that make these conventions unusable, for config validation.
    package func validationErrors() -> [String] {
        var errors: [String] = []
        if handlerPatterns.isEmpty { errors.append("handler_patterns must hold at least one pair") }
        for (i, p) in handlerPatterns.enumerated() {
            if p.entered.isEmpty || p.exited.isEmpty {
                errors.append("handler_patterns[\(i)]: entered and exited must be non-empty")
            } else if p.entered == p.exited {
                errors.append("handler_patterns[\(i)]: entered and exited must differ")
            }
        }
        if restorationAttempt == restorationFailure {
            errors.append("restoration_attempt and restoration_failure must differ")
        }
        return errors
    }
}
