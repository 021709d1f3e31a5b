import LifelineAnalysis
import LifelineModel

/// Parses the compact textual form of a ``Measure`` used in rule files, e.g.
/// `ratio(watchdog_terminations, device_days)` or
/// `percentile(signpost{category="StateRestoration",name="RestoreAttempt"}, 0.95)`.
///
/// Grammar (whitespace is free; strings take `"…"` or `'…'` with `\` escapes):
///
/// ```
/// query     := selector | call
/// selector  := NAME [ "{" [ matcher { "," matcher } [","] ] "}" ]
/// matcher   := NAME "=" STRING
/// call      := "ratio" "(" query "," query ")"
///            | "scale" "(" query "," NUMBER ")"
///            | "percentile" "(" source "," NUMBER ")"
/// source    := HISTOGRAM_ALIAS | "signpost" "{" matchers "}" | "metric" "=" STRING
/// ```
///
/// ``QueryFormatter`` writes the canonical form back; parsing it gives the same measure.
package struct QueryParser {
    private var tokens: [QueryToken]
    private var index = 0

    /// Selectors without matchers, and the measure each names.
    static let plainMeasures: [String: Measure] = [
        "device_days": .deviceDays,
        "watchdog_terminations": .watchdogTerminations,
        "new_crash_groups": .newCrashGroups,
        "handler_imbalance_ratio": .handlerImbalanceRatio,
        "handler_imbalance": .handlerImbalance,
        "restoration_error_rate": .restorationErrorRate,
    ]

    /// Every selector name, for error messages.
    static let selectorNames =
        ["exits", "exit_rate", "signposts", "diagnostics", "explorer", "regression"] + plainMeasures.keys.sorted()

    /// Histogram aliases usable as a percentile source: `launch.<name>` for the launch histograms
    /// and `hang_time`.
    static let histogramAliases: [(alias: String, source: HistogramSource)] =
        Analyzer.launchHistograms.map { ("launch.\($0.name)", $0.source) } + [("hang_time", Analyzer.hangHistogram)]

    /// Parses `text` into a measure.
    package static func parse(_ text: String) throws(QuerySyntaxError) -> Measure {
        var parser = QueryParser(tokens: try QueryToken.tokenize(text))
        let measure = try parser.query()
        let token = parser.peek
        guard token.kind == .end else {
            throw QuerySyntaxError(column: token.column, "unexpected \(token.display) after the end of the query")
        }
        return measure
    }

    private init(tokens: [QueryToken]) {
        self.tokens = tokens
    }

    private var peek: QueryToken { tokens[index] }

    private mutating func next() -> QueryToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private mutating func expect(_ character: Character, _ context: String) throws(QuerySyntaxError) {
        let token = next()
        guard token.kind == .punctuation(character) else {
            throw QuerySyntaxError(column: token.column, "expected '\(character)' \(context), found \(token.display)")
        }
    }

    private mutating func number(_ context: String) throws(QuerySyntaxError) -> (Double, Int) {
        let token = next()
        guard case .number(let value) = token.kind else {
            throw QuerySyntaxError(column: token.column, "expected a number \(context), found \(token.display)")
        }
        return (value, token.column)
    }

    private mutating func query() throws(QuerySyntaxError) -> Measure {
        let token = next()
        guard case .identifier(let name) = token.kind else {
            throw QuerySyntaxError(column: token.column, "expected a measure name, found \(token.display)")
        }
        if peek.kind == .punctuation("(") {
            return try call(name, column: token.column)
        }
        let matchers = peek.kind == .punctuation("{") ? try self.matchers() : []
        return try selector(name, column: token.column, matchers: matchers)
    }

    private struct Matcher {
        var name: String
        var value: String
        var column: Int
    }

    private mutating func matchers() throws(QuerySyntaxError) -> [Matcher] {
        try expect("{", "to open the label matchers")
        var matchers: [Matcher] = []
        while true {
            let token = next()
            if token.kind == .punctuation("}") { break }
            guard case .identifier(let name) = token.kind else {
                throw QuerySyntaxError(column: token.column, "expected a label name or '}', found \(token.display)")
            }
            if matchers.contains(where: { $0.name == name }) {
                throw QuerySyntaxError(column: token.column, "label \"\(name)\" is given twice")
            }
            try expect("=", "after label \"\(name)\"")
            let value = next()
            guard case .string(let text) = value.kind else {
                throw QuerySyntaxError(
                    column: value.column, "expected a quoted string for \"\(name)\", found \(value.display)")
            }
            matchers.append(Matcher(name: name, value: text, column: token.column))
            let separator = next()
            if separator.kind == .punctuation("}") { break }
            guard separator.kind == .punctuation(",") else {
                throw QuerySyntaxError(column: separator.column, "expected ',' or '}', found \(separator.display)")
            }
        }
        return matchers
    }

    private func selector(_ name: String, column: Int, matchers: [Matcher]) throws(QuerySyntaxError) -> Measure {
        func allow(_ names: Set<String>) throws(QuerySyntaxError) {
            for matcher in matchers where !names.contains(matcher.name) {
                let allowed = names.isEmpty ? "none" : names.sorted().joined(separator: ", ")
                throw QuerySyntaxError(
                    column: matcher.column, "\(name) has no label \"\(matcher.name)\" (allowed: \(allowed))")
            }
        }
        func value(_ label: String) -> (String, Int)? {
            matchers.first { $0.name == label }.map { ($0.value, $0.column) }
        }
        switch name {
        case "exits", "exit_rate":
            try allow(["state", "reason"])
            var state: AppState?
            if let (text, column) = value("state") {
                guard let parsed = AppState(rawValue: text) else {
                    throw QuerySyntaxError(
                        column: column, "state must be \"foreground\" or \"background\", not \"\(text)\"")
                }
                state = parsed
            }
            let reason = value("reason")?.0
            return name == "exits" ? .exits(state: state, reason: reason) : .exitRate(state: state, reason: reason)
        case "signposts":
            try allow(["name", "category"])
            guard let (signpost, _) = value("name") else {
                throw QuerySyntaxError(column: column, "signposts needs a name: signposts{name=\"…\"}")
            }
            return .signposts(category: value("category")?.0, name: signpost)
        case "diagnostics":
            try allow(["kind"])
            var kind: DiagnosticKind?
            if let (text, column) = value("kind") {
                guard let parsed = DiagnosticKind(rawValue: text) else {
                    let kinds = DiagnosticKind.allCases.map(\.rawValue).joined(separator: ", ")
                    throw QuerySyntaxError(column: column, "kind must be one of \(kinds), not \"\(text)\"")
                }
                kind = parsed
            }
            return .diagnostics(kind: kind)
        case "explorer", "regression":
            try allow(name == "explorer" ? ["metric", "stat"] : ["metric", "percentile"])
            guard let (id, idColumn) = value("metric") else {
                throw QuerySyntaxError(
                    column: column, "\(name) needs a metric: \(name){metric=\"launch.time_to_first_draw\"}")
            }
            guard ExplorerCatalog.metric(id) != nil else {
                throw QuerySyntaxError(
                    column: idColumn, "unknown explorer metric \"\(id)\" (the ids of GET /v1/apps/{id}/metrics)")
            }
            if name == "explorer" {
                let (text, statColumn) = value("stat") ?? ("p50", column)
                guard let statistic = ExplorerStatistic(rawValue: text) else {
                    let known = ExplorerStatistic.allCases.map(\.rawValue).joined(separator: ", ")
                    throw QuerySyntaxError(column: statColumn, "stat must be one of \(known), not \"\(text)\"")
                }
                return .explorer(metric: id, statistic: statistic)
            }
            let (text, percentileColumn) = value("percentile") ?? ("90", column)
            guard text == "50" || text == "90" else {
                throw QuerySyntaxError(column: percentileColumn, "percentile must be \"50\" or \"90\", not \"\(text)\"")
            }
            return .regression(metric: id, percentile: text == "50" ? 0.5 : 0.9)
        default:
            guard let measure = Self.plainMeasures[name] else {
                throw QuerySyntaxError(
                    column: column,
                    "unknown measure \"\(name)\" (known: \(Self.selectorNames.joined(separator: ", ")), "
                        + "ratio(…), scale(…), percentile(…))")
            }
            try allow([])
            return measure
        }
    }

    private mutating func call(_ name: String, column: Int) throws(QuerySyntaxError) -> Measure {
        try expect("(", "after \(name)")
        let measure: Measure
        switch name {
        case "ratio":
            let numerator = try query()
            try expect(",", "between the two arguments of ratio")
            let denominator = try query()
            measure = .ratio(numerator, denominator)
        case "scale":
            let inner = try query()
            try expect(",", "between the arguments of scale")
            let (factor, _) = try number("as the factor of scale")
            measure = .scaled(inner, factor)
        case "percentile":
            let source = try histogramSource()
            try expect(",", "between the arguments of percentile")
            let (quantile, quantileColumn) = try number("as the quantile of percentile")
            guard (0...1).contains(quantile) else {
                throw QuerySyntaxError(
                    column: quantileColumn, "the quantile must be between 0 and 1 (0.95 for p95), not \(quantile)")
            }
            measure = .percentile(source, quantile)
        default:
            throw QuerySyntaxError(
                column: column, "unknown function \"\(name)\" (known: ratio, scale, percentile)")
        }
        try expect(")", "to close \(name)(…)")
        return measure
    }

    private mutating func histogramSource() throws(QuerySyntaxError) -> HistogramSource {
        let token = next()
        guard case .identifier(let name) = token.kind else {
            throw QuerySyntaxError(column: token.column, "expected a histogram, found \(token.display)")
        }
        switch name {
        case "signpost", "signposts":
            let matchers = try self.matchers()
            var category: String?
            var signpost: String?
            for matcher in matchers {
                switch matcher.name {
                case "category": category = matcher.value
                case "name": signpost = matcher.value
                default:
                    throw QuerySyntaxError(
                        column: matcher.column, "signpost has no label \"\(matcher.name)\" (allowed: category, name)")
                }
            }
            guard let category, let signpost else {
                throw QuerySyntaxError(
                    column: token.column, "a signpost histogram needs both category and name")
            }
            return .signpost(category: category, name: signpost)
        case "metric":
            try expect("=", "after metric")
            let value = next()
            guard case .string(let text) = value.kind, !text.isEmpty else {
                throw QuerySyntaxError(
                    column: value.column,
                    "expected the histogram's key as a quoted string (metric=\"section.key\"), found \(value.display)")
            }
            return .metric(text)
        default:
            guard let alias = Self.histogramAliases.first(where: { $0.alias == name }) else {
                let known = Self.histogramAliases.map(\.alias).joined(separator: ", ")
                throw QuerySyntaxError(
                    column: token.column,
                    "unknown histogram \"\(name)\" (known: \(known), signpost{…}, metric=\"…\")")
            }
            return alias.source
        }
    }
}
