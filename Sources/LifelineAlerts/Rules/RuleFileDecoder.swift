import Yams

/// Stage one: reads rule-file YAML into a ``RuleFileDocument``, noting every value of the wrong
/// shape (with its line) instead of stopping at the first.
struct RuleFileDecoder {
    let file: String
    private(set) var problems: [RuleFileProblem] = []

    init(file: String) {
        self.file = file
    }

    private typealias Located = RuleFileDocument.Located

    /// The document, or `nil` when the text is not YAML at all (a problem is recorded).
    mutating func decode(_ text: String) -> RuleFileDocument? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            problems.append(Self.syntaxProblem(error, file: file))
            return nil
        } catch {
            problems.append(.init(file: file, line: nil, subject: nil, message: "not YAML: \(error)"))
            return nil
        }
        guard let root else {
            problems.append(.init(file: file, line: nil, subject: nil, message: "the file is empty"))
            return nil
        }
        var document = RuleFileDocument()
        guard
            let entries = mapping(
                root, subject: nil, what: "the file",
                allowed: ["evaluation_interval", "external_url", "groups", "receivers", "route"])
        else { return document }
        for (key, value, line) in entries {
            switch key {
            case "evaluation_interval":
                document.evaluationInterval = string(value, subject: nil, key: key).map { Located($0, line: line) }
            case "external_url":
                document.externalURL = string(value, subject: nil, key: key).map { Located($0, line: line) }
            case "groups":
                for (index, item) in sequence(value, subject: nil, key: key).enumerated() {
                    document.groups.append(group(item, index: index))
                }
            case "receivers":
                for (index, item) in sequence(value, subject: nil, key: key).enumerated() {
                    document.receivers.append(receiver(item, index: index))
                }
            case "route":
                document.route = route(value, subject: "route")
            default:
                break
            }
        }
        return document
    }

    static func syntaxProblem(_ error: YamlError, file: String) -> RuleFileProblem {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return .init(file: file, line: mark.line, subject: nil, message: "YAML syntax error: \(problem)")
        default:
            return .init(file: file, line: nil, subject: nil, message: "YAML syntax error: \(error)")
        }
    }

    // MARK: Sections

    private mutating func group(_ node: Node, index: Int) -> RuleFileDocument.Group {
        var group = RuleFileDocument.Group(line: line(node))
        var subject = "group #\(index + 1)"
        if let name = node.mapping?["name"].flatMap({ $0.scalar?.string }) { subject = "group \"\(name)\"" }
        guard let entries = mapping(node, subject: subject, what: "a group", allowed: ["name", "app", "rules"]) else {
            return group
        }
        for (key, value, line) in entries {
            switch key {
            case "name": group.name = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "app": group.app = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "rules":
                for (ruleIndex, item) in sequence(value, subject: subject, key: key).enumerated() {
                    group.rules.append(rule(item, subject: "rule #\(ruleIndex + 1) of \(subject)"))
                }
            default: break
            }
        }
        return group
    }

    private mutating func rule(_ node: Node, subject fallback: String) -> RuleFileDocument.Rule {
        var rule = RuleFileDocument.Rule(line: line(node))
        var subject = fallback
        if let name = node.mapping?["name"].flatMap({ $0.scalar?.string }), !name.isEmpty {
            subject = "rule \"\(name)\""
        }
        let allowed: Set<String> = [
            "name", "query", "op", "threshold", "window", "group_by", "for", "keep_firing_for", "min_samples",
            "app", "labels", "annotations",
        ]
        guard let entries = mapping(node, subject: subject, what: "a rule", allowed: allowed) else { return rule }
        for (key, value, line) in entries {
            let reported = problems.count
            defer { if problems.count > reported { rule.invalid.insert(key) } }
            switch key {
            case "name": rule.name = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "query": rule.query = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "op": rule.op = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "threshold":
                rule.threshold = number(value, subject: subject, key: key).map { Located($0, line: line) }
            case "window": rule.window = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "group_by":
                rule.groupBy = stringList(value, subject: subject, key: key).map { Located($0, line: line) }
            case "for": rule.forDuration = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "keep_firing_for":
                rule.keepFiringFor = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "min_samples":
                rule.minSamples = integer(value, subject: subject, key: key).map { Located($0, line: line) }
            case "app": rule.app = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "labels": rule.labels = stringMap(value, subject: subject, key: key)
            case "annotations": rule.annotations = stringMap(value, subject: subject, key: key)
            default: break
            }
        }
        return rule
    }

    private mutating func receiver(_ node: Node, index: Int) -> RuleFileDocument.Receiver {
        var receiver = RuleFileDocument.Receiver(line: line(node))
        var subject = "receiver #\(index + 1)"
        if let name = node.mapping?["name"].flatMap({ $0.scalar?.string }) { subject = "receiver \"\(name)\"" }
        let allowed: Set<String> = [
            "name", "webhook", "alertmanager", "send_resolved", "max_attempts", "initial_backoff", "timeout",
            "queue_capacity",
        ]
        guard let entries = mapping(node, subject: subject, what: "a receiver", allowed: allowed) else {
            return receiver
        }
        for (key, value, line) in entries {
            let reported = problems.count
            defer { if problems.count > reported { receiver.invalid.insert(key) } }
            switch key {
            case "name": receiver.name = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "webhook", "alertmanager":
                if let previous = receiver.kind {
                    problems.append(
                        .init(
                            file: file, line: line, subject: subject,
                            message: "has both \(previous.value) and \(key); a receiver sends to one endpoint"))
                    continue
                }
                receiver.kind = Located(key, line: line)
                guard let fields = mapping(value, subject: subject, what: key, allowed: ["url", "headers"]) else {
                    continue
                }
                for (field, fieldValue, fieldLine) in fields {
                    if field == "url" {
                        receiver.url = string(fieldValue, subject: subject, key: "\(key).url").map {
                            Located($0, line: fieldLine)
                        }
                    } else {
                        receiver.headers = stringMap(fieldValue, subject: subject, key: "\(key).headers")
                    }
                }
            case "send_resolved":
                receiver.sendResolved = bool(value, subject: subject, key: key).map { Located($0, line: line) }
            case "max_attempts":
                receiver.maxAttempts = integer(value, subject: subject, key: key).map { Located($0, line: line) }
            case "initial_backoff":
                receiver.initialBackoff = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "timeout":
                receiver.timeout = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "queue_capacity":
                receiver.queueCapacity = integer(value, subject: subject, key: key).map { Located($0, line: line) }
            default: break
            }
        }
        return receiver
    }

    private mutating func route(_ node: Node, subject: String) -> RuleFileDocument.Route {
        var route = RuleFileDocument.Route(line: line(node))
        guard
            let entries = mapping(
                node, subject: subject, what: "a route", allowed: ["receiver", "match", "continue", "routes"])
        else { return route }
        for (key, value, line) in entries {
            switch key {
            case "receiver":
                route.receiver = string(value, subject: subject, key: key).map { Located($0, line: line) }
            case "match": route.match = stringMap(value, subject: subject, key: key)
            case "continue":
                route.continueMatching = bool(value, subject: subject, key: key).map { Located($0, line: line) }
            case "routes":
                for (index, item) in sequence(value, subject: subject, key: key).enumerated() {
                    route.routes.append(self.route(item, subject: "\(subject).routes[\(index)]"))
                }
            default: break
            }
        }
        return route
    }

    // MARK: Values

    private func line(_ node: Node) -> Int { node.mark?.line ?? 0 }

    private mutating func problem(_ node: Node, _ subject: String?, _ message: String) {
        problems.append(.init(file: file, line: node.mark?.line, subject: subject, message: message))
    }

    /// The entries of a mapping with string keys; unknown and repeated keys are problems.
    private mutating func mapping(
        _ node: Node, subject: String?, what: String, allowed: Set<String>?
    ) -> [(String, Node, Int)]? {
        guard let mapping = node.mapping else {
            problem(node, subject, "\(what) must be a mapping (key: value)")
            return nil
        }
        var seen: Set<String> = []
        var entries: [(String, Node, Int)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                problem(keyNode, subject, "keys of \(what) must be plain strings")
                continue
            }
            guard seen.insert(key).inserted else {
                problem(keyNode, subject, "\(key) is given twice")
                continue
            }
            if let allowed, !allowed.contains(key) {
                problem(
                    keyNode, subject, "unknown field \"\(key)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
                continue
            }
            entries.append((key, value, line(keyNode)))
        }
        return entries
    }

    private mutating func sequence(_ node: Node, subject: String?, key: String) -> [Node] {
        guard let sequence = node.sequence else {
            problem(node, subject, "\(key) must be a list")
            return []
        }
        return Array(sequence)
    }

    private mutating func string(_ node: Node, subject: String?, key: String) -> String? {
        guard let scalar = node.scalar, !(scalar.style == .plain && node.null != nil) else {
            problem(node, subject, "\(key) must be a string")
            return nil
        }
        return scalar.string
    }

    private mutating func number(_ node: Node, subject: String?, key: String) -> Double? {
        guard let scalar = node.scalar, scalar.style == .plain,
            let value = Double(scalar.string.filter { $0 != "_" }), value.isFinite
        else {
            problem(node, subject, "\(key) must be a number")
            return nil
        }
        return value
    }

    private mutating func integer(_ node: Node, subject: String?, key: String) -> Int64? {
        guard let scalar = node.scalar, scalar.style == .plain,
            let value = Int64(scalar.string.filter { $0 != "_" })
        else {
            problem(node, subject, "\(key) must be a whole number")
            return nil
        }
        return value
    }

    private mutating func bool(_ node: Node, subject: String?, key: String) -> Bool? {
        switch node.scalar.map({ ($0.style, $0.string.lowercased()) }) {
        case (.plain, "true")?: return true
        case (.plain, "false")?: return false
        default:
            problem(node, subject, "\(key) must be true or false")
            return nil
        }
    }

    private mutating func stringList(_ node: Node, subject: String?, key: String) -> [String]? {
        guard let sequence = node.sequence else {
            problem(node, subject, "\(key) must be a list of strings, e.g. [version]")
            return nil
        }
        var values: [String] = []
        for item in sequence {
            guard let text = string(item, subject: subject, key: "every item of \(key)") else { return nil }
            values.append(text)
        }
        return values
    }

    private mutating func stringMap(
        _ node: Node, subject: String?, key: String
    ) -> [Located<RuleFileDocument.KeyValue>] {
        guard let entries = mapping(node, subject: subject, what: key, allowed: nil) else { return [] }
        var pairs: [Located<RuleFileDocument.KeyValue>] = []
        for (name, value, line) in entries {
            guard let text = value.scalar?.string else {
                problem(value, subject, "\(key).\(name) must be a string")
                continue
            }
            pairs.append(Located(.init(key: name, value: text), line: line))
        }
        return pairs
    }
}
