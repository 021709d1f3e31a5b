/// iOS 27 app states: `stateEntries` and the states of an entry or a diagnostic's environment.
extension DocumentDecoder {
    /// The state entries of `stateEntries`: an array, or (`byStateReportingDomain`) an object of
    /// arrays keyed by domain.
    func stateEntryTokens(_ t: Int) throws(DecodeError) -> [Int] {
        var tokens: [Int] = []
        func collect(_ list: Int) {
            guard tape.kind(list) == .array else { return }
            tape.forEachElement(list) { e in if tape.kind(e) == .object { tokens.append(e) } }
        }
        if tape.kind(t) == .object {
            tape.forEachMember(t) { _, v in collect(v) }
        } else {
            collect(t)
        }
        return tokens
    }

    /// The states of an interval entry or an environment: an array, or an object of arrays keyed by domain.
    mutating func reportedStates(_ t: Int) throws(DecodeError) -> [(ReportedState, Double?)] {
        var states: [(ReportedState, Double?)] = []
        var elements: [Int] = []
        if tape.kind(t) == .object {
            tape.forEachMember(t) { _, v in
                if tape.kind(v) == .array { tape.forEachElement(v) { elements.append($0) } }
            }
        } else if tape.kind(t) == .array {
            tape.forEachElement(t) { elements.append($0) }
        }
        guard elements.count <= limits.maxStatesPerDocument else {
            throw limitError("more than \(limits.maxStatesPerDocument) app states", at: t)
        }
        for element in elements {
            if let state = reportedState(element) { states.append(state) }
        }
        return states
    }

    /// One `ReportedState`: domain, label, stable metadata (canonical JSON) and active time (s).
    mutating func reportedState(_ t: Int) -> (ReportedState, Double?)? {
        guard tape.kind(t) == .object else { return nil }
        var domain: String?
        var label: String?
        var seconds: Double?
        var metadata: [(key: String, json: String)] = []
        var metadataBytes = 0
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "domain") {
                if tape.kind(v) == .string, nameFits(v) { domain = tape.nonEmptyString(v) }
            } else if tape.keyEquals(k, "label") {
                if tape.kind(v) == .string, nameFits(v) { label = tape.nonEmptyString(v) }
            } else if tape.keyEquals(k, "duration") {
                seconds = measurement(v)?.value.map { $0 / 1_000 }
            } else if tape.keyEquals(k, "stableMetadata"), tape.kind(v) == .object {
                tape.forEachMember(v) { mk, mv in
                    // Each value is a single-key object: {"string": …}, {"integer": …}, …
                    guard nameFits(mk), tape.kind(mv) == .object else { return }
                    var json: String?
                    tape.forEachMember(mv) { _, value in
                        guard json == nil else { return }
                        let length = tape.rawLength(value)
                        guard length <= limits.maxNameBytes else {
                            dropped += 1
                            return
                        }
                        switch tape.kind(value) {
                        case .string: json = Self.jsonString(tape.string(value) ?? "")
                        case .number, .true, .false:
                            json = String(decoding: tape.bytes[tape.byteRange(value)], as: UTF8.self)
                        default: break
                        }
                    }
                    guard let json, metadataBytes + json.utf8.count <= 4 * limits.maxNameBytes else { return }
                    metadataBytes += json.utf8.count
                    metadata.append((tape.string(mk) ?? "", json))
                }
            }
        }
        guard let domain, let label else { return nil }
        metadata.sort { $0.key < $1.key }
        let object = "{" + metadata.map { Self.jsonString($0.key) + ":" + $0.json }.joined(separator: ",") + "}"
        return (ReportedState(domain: domain, label: label, metadata: object), seconds)
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
