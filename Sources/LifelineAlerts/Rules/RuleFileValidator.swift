import LifelineAnalysis

/// Stage two: checks the meaning of every field of a ``RuleFileDocument``, reporting every
/// problem with its line, and builds the ``RuleSet`` only when there is none.
struct RuleFileValidator {
    let file: String
    private(set) var problems: [RuleFileProblem] = []

    init(file: String) {
        self.file = file
    }

    typealias Document = RuleFileDocument

    /// The rule set, or `nil` when a problem was found.
    mutating func validate(_ document: Document) -> RuleSet? {
        var set = RuleSet()
        if let interval = document.evaluationInterval {
            if let seconds = RuleDuration.seconds(interval.value), seconds >= 1 {
                set.evaluationInterval = seconds
            } else {
                problem(interval.line, nil, "evaluation_interval must be a duration of at least 1s, like 60s or 5m")
            }
        }
        if let url = document.externalURL {
            if Self.isHTTPURL(url.value) {
                set.externalURL = url.value.hasSuffix("/") ? String(url.value.dropLast()) : url.value
            } else {
                problem(url.line, nil, "external_url must be an http:// or https:// URL")
            }
        }
        var groupNames: [String: Int] = [:]
        var ruleNames: [String: Int] = [:]
        for group in document.groups {
            var groupName = ""
            if let name = group.name, !name.value.isEmpty {
                groupName = name.value
                if let first = groupNames[name.value] {
                    problem(name.line, "group \"\(name.value)\"", "the name is already used on line \(first)")
                } else {
                    groupNames[name.value] = name.line
                }
            } else {
                problem(group.name?.line ?? group.line, nil, "a group needs a name")
            }
            if let app = group.app, app.value.isEmpty {
                problem(app.line, "group \"\(groupName)\"", "app must not be empty")
            }
            if group.rules.isEmpty {
                problem(group.line, "group \"\(groupName)\"", "a group needs at least one rule")
            }
            for rule in group.rules {
                if let name = rule.name, !name.value.isEmpty {
                    if let first = ruleNames[name.value] {
                        problem(
                            name.line, "rule \"\(name.value)\"",
                            "the name is already used on line \(first); rule names must be unique in the file")
                    } else {
                        ruleNames[name.value] = name.line
                    }
                }
                if let built = self.rule(rule, group: groupName, groupApp: group.app?.value) {
                    set.rules.append(built)
                }
            }
        }
        var receiverNames: Set<String> = []
        for receiver in document.receivers {
            if let built = self.receiver(receiver) {
                if receiverNames.insert(built.name).inserted {
                    set.receivers.append(built)
                } else {
                    problem(
                        receiver.name?.line ?? receiver.line, "receiver \"\(built.name)\"", "the name is already used")
                }
            }
        }
        if let route = document.route {
            set.route = self.route(route, subject: "route", receivers: receiverNames, isRoot: true)
            if document.receivers.isEmpty {
                problem(route.line, "route", "a route needs receivers: add a receivers section")
            }
        }
        return problems.isEmpty ? set : nil
    }

    // MARK: Rules

    private mutating func rule(_ raw: Document.Rule, group: String, groupApp: String?) -> AlertRule? {
        let before = problems.count
        let name = raw.name?.value ?? ""
        let subject = name.isEmpty ? "rule on line \(raw.line)" : "rule \"\(name)\""
        if name.isEmpty, !raw.invalid.contains("name") {
            problem(raw.name?.line ?? raw.line, subject, "a rule needs a name")
        } else if name.utf8.count > 255 {
            problem(raw.name?.line ?? raw.line, subject, "the name must be at most 255 bytes")
        }
        var measure: Measure?
        if let query = raw.query {
            do {
                measure = try QueryParser.parse(query.value)
            } catch {
                problem(query.line, subject, "query: \(error)")
            }
        } else if !raw.invalid.contains("query") {
            problem(raw.line, subject, "a rule needs a query, e.g. query: restoration_error_rate")
        }
        var op: ComparisonOperator?
        if let text = raw.op {
            op = ComparisonOperator(rawValue: text.value)
            if op == nil {
                let known = ComparisonOperator.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                problem(text.line, subject, "op must be one of \(known) (quote it in YAML), not \"\(text.value)\"")
            }
        } else if !raw.invalid.contains("op") {
            problem(raw.line, subject, "a rule needs op, e.g. op: \">\"")
        }
        if raw.threshold == nil, !raw.invalid.contains("threshold") {
            problem(raw.line, subject, "a rule needs a threshold, e.g. threshold: 0.001")
        }
        var windowDays = 1
        if let window = raw.window {
            if let seconds = RuleDuration.seconds(window.value), seconds >= 86_400, seconds % 86_400 == 0,
                seconds <= 400 * 86_400
            {
                windowDays = Int(seconds / 86_400)
            } else {
                problem(
                    window.line, subject,
                    "window must be whole days from 1d to 400d, like 1d or 7d, not \"\(window.value)\"")
            }
        }
        var groupBy: [GroupDimension] = []
        if let dimensions = raw.groupBy {
            for text in dimensions.value {
                guard let dimension = GroupDimension(rawValue: text) else {
                    let known = GroupDimension.allCases.map(\.rawValue).joined(separator: ", ")
                    problem(dimensions.line, subject, "group_by: \"\(text)\" is not one of \(known)")
                    continue
                }
                if groupBy.contains(dimension) {
                    problem(dimensions.line, subject, "group_by: \(text) is given twice")
                }
                groupBy.append(dimension)
            }
        }
        let forSeconds = duration(raw.forDuration, "for", subject)
        let keepSeconds = duration(raw.keepFiringFor, "keep_firing_for", subject)
        var minSamples: Int64 = 0
        if let samples = raw.minSamples {
            if samples.value >= 0 {
                minSamples = samples.value
            } else {
                problem(samples.line, subject, "min_samples must be 0 or more")
            }
        }
        if let app = raw.app, app.value.isEmpty { problem(app.line, subject, "app must not be empty") }
        var labels: [String: String] = [:]
        for label in raw.labels {
            if !Self.isLabelName(label.value.key) {
                problem(label.line, subject, "label name \"\(label.value.key)\" must match [A-Za-z_][A-Za-z0-9_]*")
            } else if Self.reservedLabels.contains(label.value.key) {
                problem(label.line, subject, "label \"\(label.value.key)\" is set by Lifeline and cannot be overridden")
            }
            labels[label.value.key] = label.value.value
        }
        var available = Set(["alertname", "app"] + groupBy.map(\.rawValue) + labels.keys)
        if let measure { available.formUnion(Self.measureLabels(measure)) }
        var annotations: [String: AnnotationTemplate] = [:]
        for annotation in raw.annotations {
            do {
                let template = try AnnotationTemplate(annotation.value.value)
                for label in template.labelNames where !available.contains(label) {
                    problem(
                        annotation.line, subject,
                        "annotations.\(annotation.value.key): $labels.\(label) is not a label of this rule "
                            + "(available: \(available.sorted().joined(separator: ", ")))")
                }
                annotations[annotation.value.key] = template
            } catch {
                problem(annotation.line, subject, "annotations.\(annotation.value.key): \(error)")
            }
        }
        guard problems.count == before, let measure, let op, let threshold = raw.threshold?.value else { return nil }
        return AlertRule(
            name: name, group: group, query: raw.query?.value ?? "", measure: measure, op: op, threshold: threshold,
            windowDays: windowDays, groupBy: groupBy, forSeconds: forSeconds, keepFiringForSeconds: keepSeconds,
            minSamples: minSamples, app: raw.app?.value ?? groupApp, labels: labels, annotations: annotations,
            line: raw.line)
    }

    /// Labels Lifeline sets itself.
    static let reservedLabels: Set<String> = [
        "alertname", "app", "version", "os", "device", "day", "handler", "category", "subject",
    ]

    /// The labels a measure sets beyond the rule's `group_by`: a handler's, a series' (`subject`,
    /// for explorer metrics with series), and the newest version a regression is about.
    private static func measureLabels(_ measure: Measure) -> Set<String> {
        switch measure {
        case .handlerImbalance, .handlerImbalanceRatio: ["handler", "category"]
        case .explorer: ["subject"]
        case .regression: ["version", "subject"]
        case .scaled(let inner, _): measureLabels(inner)
        default: []
        }
    }

    private mutating func duration(
        _ value: Document.Located<String>?, _ key: String, _ subject: String
    ) -> Int64 {
        guard let value else { return 0 }
        guard let seconds = RuleDuration.seconds(value.value) else {
            problem(value.line, subject, "\(key) must be a duration like 90s, 5m, 2h or 1d, not \"\(value.value)\"")
            return 0
        }
        return seconds
    }

    // MARK: Receivers and routes

    private mutating func receiver(_ raw: Document.Receiver) -> ReceiverConfig? {
        let before = problems.count
        let name = raw.name?.value ?? ""
        let subject = name.isEmpty ? "receiver on line \(raw.line)" : "receiver \"\(name)\""
        if name.isEmpty, !raw.invalid.contains("name") { problem(raw.line, subject, "a receiver needs a name") }
        guard let kindText = raw.kind, let kind = ReceiverConfig.Kind(rawValue: kindText.value) else {
            problem(raw.line, subject, "a receiver needs webhook: {url: …} or alertmanager: {url: …}")
            return nil
        }
        guard let url = raw.url else {
            problem(kindText.line, subject, "\(kind.rawValue) needs a url")
            return nil
        }
        if !Self.isHTTPURL(url.value) { problem(url.line, subject, "url must be an http:// or https:// URL") }
        var config = ReceiverConfig(name: name, kind: kind, url: url.value)
        for header in raw.headers { config.headers[header.value.key] = header.value.value }
        if let sendResolved = raw.sendResolved { config.sendResolved = sendResolved.value }
        if let attempts = raw.maxAttempts {
            if (1...100).contains(attempts.value) {
                config.maxAttempts = Int(attempts.value)
            } else {
                problem(attempts.line, subject, "max_attempts must be 1…100")
            }
        }
        if let capacity = raw.queueCapacity {
            if (1...100_000).contains(capacity.value) {
                config.queueCapacity = Int(capacity.value)
            } else {
                problem(capacity.line, subject, "queue_capacity must be 1…100000")
            }
        }
        if let backoff = raw.initialBackoff {
            if let milliseconds = Self.milliseconds(backoff.value), milliseconds > 0 {
                config.initialBackoff = .milliseconds(milliseconds)
            } else {
                problem(backoff.line, subject, "initial_backoff must be a positive duration like 500ms or 1s")
            }
        }
        if let timeout = raw.timeout {
            if let milliseconds = Self.milliseconds(timeout.value), milliseconds > 0 {
                config.timeout = .milliseconds(milliseconds)
            } else {
                problem(timeout.line, subject, "timeout must be a positive duration like 10s")
            }
        }
        return problems.count == before ? config : nil
    }

    private mutating func route(
        _ raw: Document.Route, subject: String, receivers: Set<String>, isRoot: Bool
    ) -> RouteConfig {
        var route = RouteConfig(receiver: raw.receiver?.value)
        if let receiver = raw.receiver, !receivers.contains(receiver.value) {
            problem(receiver.line, subject, "receiver \"\(receiver.value)\" is not defined under receivers")
        }
        if isRoot, raw.receiver == nil {
            problem(raw.line, subject, "the top route needs a receiver (the default)")
        }
        for pair in raw.match {
            if !Self.isLabelName(pair.value.key) {
                problem(pair.line, subject, "label name \"\(pair.value.key)\" must match [A-Za-z_][A-Za-z0-9_]*")
            }
            route.match[pair.value.key] = pair.value.value
        }
        if let continueMatching = raw.continueMatching {
            if isRoot { problem(continueMatching.line, subject, "continue only applies to child routes") }
            route.continueMatching = continueMatching.value
        }
        for (index, child) in raw.routes.enumerated() {
            route.routes.append(
                self.route(child, subject: "\(subject).routes[\(index)]", receivers: receivers, isRoot: false))
        }
        return route
    }

    // MARK: Helpers

    private mutating func problem(_ line: Int?, _ subject: String?, _ message: String) {
        problems.append(.init(file: file, line: line, subject: subject, message: message))
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetterOrUnderscore else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetterOrUnderscore || ("0"..."9").contains($0) }
    }

    static func isHTTPURL(_ text: String) -> Bool {
        (text.hasPrefix("http://") && text.count > 7) || (text.hasPrefix("https://") && text.count > 8)
    }

    /// `500ms` or any ``RuleDuration``, in milliseconds.
    static func milliseconds(_ text: String) -> Int64? {
        if text.hasSuffix("ms") { return Int64(text.dropLast(2)) }
        return RuleDuration.seconds(text).map { $0 * 1000 }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetterOrUnderscore: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self) || self == "_"
    }
}
