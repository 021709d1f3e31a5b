/// iOS 27 `DiagnosticReport`, and the parts every 2.0.0 report shares (time range, environment).
extension DocumentDecoder {
    /// `timeRange`: `begin`/`end` as seconds since 2001 (numbers) or ISO 8601 strings.
    mutating func timeRange(_ t: Int) -> (Timestamp?, Timestamp?) {
        guard tape.kind(t) == .object else { return (nil, nil) }
        var begin: Timestamp?
        var end: Timestamp?
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "begin") {
                begin = reportTime(v)
            } else if tape.keyEquals(k, "end") {
                end = reportTime(v)
            }
        }
        return (begin, end)
    }

    /// A 2.0.0 report's day is the UTC date of `timeRange.begin`: without a readable one the report
    /// is refused (never counted under the day it arrived).
    func requireBegin(_ begin: Timestamp?, _ root: Int) throws(DecodeError) {
        guard begin?.epochSeconds == nil else { return }
        throw DecodeError(
            code: .unreadableTimeRange,
            message: "document \(document): timeRange.begin is missing or unreadable (seconds since 2001 or an "
                + "ISO 8601 date); the report's day cannot be known",
            offset: tape.byteRange(root).lowerBound)
    }

    /// A report date: a number of seconds since 2001-01-01, or a timestamp string.
    mutating func reportTime(_ t: Int) -> Timestamp? {
        if tape.kind(t) == .string { return timestamp(t) }
        guard tape.kind(t) == .number, let seconds = tape.double(t) else { return nil }
        let raw = String(decoding: tape.bytes[tape.byteRange(t)], as: UTF8.self)
        let epoch = (seconds + Self.referenceDateOffset).rounded(.down)
        guard epoch.isFinite, abs(epoch) < 1e15, ValueBounds.isPlausibleEpoch(Int64(epoch)) else {
            dropped += 1
            return Timestamp(epochSeconds: nil, raw: raw)
        }
        return Timestamp(epochSeconds: Int64(epoch), raw: raw)
    }

    /// Applies an `environment` object to `meta`; returns the diagnostic-only parts (states active
    /// before the event, `signpostData` as JSON).
    mutating func environment(_ t: Int, into meta: inout DeviceMeta) throws(DecodeError) -> (
        states: [ReportedState], signpostData: String?
    ) {
        guard tape.kind(t) == .object else { return ([], nil) }
        var states: [ReportedState] = []
        var signpostData: String?
        var failure: DecodeError?
        var d = self
        tape.forEachMember(t) { k, v in
            guard failure == nil else { return }
            if tape.keyEquals(k, "latestApplicationVersion") || tape.keyEquals(k, "applicationVersion") {
                meta.appVersion = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "applicationBuildVersion") {
                meta.appBuildVersion = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "osVersion"), tape.kind(v) == .object {
                let platform = tape.member(v, "platform").flatMap { tape.nonEmptyString($0) }
                let number = tape.member(v, "number").flatMap { tape.nonEmptyString($0) }
                let build = tape.member(v, "buildNumber").flatMap { tape.nonEmptyString($0) }
                // The legacy display form, "iPhone OS 27.0 (24A435)", so OS filters match both formats.
                var text = [platform, number].compactMap { $0 }.joined(separator: " ")
                if let build { text += text.isEmpty ? build : " (\(build))" }
                meta.osVersion = text.isEmpty || text.utf8.count > limits.maxNameBytes * 2 ? nil : text
            } else if tape.keyEquals(k, "states") {
                do throws(DecodeError) {
                    states = try d.reportedStates(v).map(\.0)
                } catch {
                    failure = error
                }
            } else if tape.keyEquals(k, "signpostData") {
                if tape.rawLength(v) <= 16 * 1_024 {
                    signpostData = String(decoding: tape.bytes[tape.byteRange(v)], as: UTF8.self)
                } else {
                    d.dropped += 1
                }
            } else {
                _ = applyMetaField(key: k, value: v, to: &meta)
            }
        }
        self.unparsed = d.unparsed
        self.dropped = d.dropped
        if let failure { throw failure }
        return (states, signpostData)
    }

    // MARK: - DiagnosticReport

    /// Decodes a `DiagnosticReport`: one diagnostic, its device from `environment`, the report's
    /// `timeRange` as the payload's.
    mutating func diagnosticReport(_ root: Int) throws(DecodeError) -> DiagnosticPayload {
        var meta = DeviceMeta()
        var begin: Timestamp?
        var end: Timestamp?
        var body: (token: Int, kind: DiagnosticKind)?
        var environmentToken: Int?
        tape.forEachMember(root) { k, v in
            if tape.keyEquals(k, "timeRange") {
                (begin, end) = timeRange(v)
            } else if tape.keyEquals(k, "environment") {
                environmentToken = v
            } else if body == nil, let entry = Self.reportDiagnosticKeys.first(where: { tape.keyEquals(k, $0.key) }) {
                body = (v, entry.kind)
            }
        }
        guard let body, tape.kind(body.token) == .object else {
            throw DecodeError(
                code: .notMetricKit,
                message: "document \(document): a 2.0.0 diagnostic report needs one object of crashDiagnostic, "
                    + "hangDiagnostic, cpuExceptionDiagnostic, diskWriteExceptionDiagnostic, appLaunchDiagnostic "
                    + "or memoryExceptionDiagnostic",
                offset: tape.byteRange(root).lowerBound)
        }
        try requireBegin(begin, root)
        var context: (states: [ReportedState], signpostData: String?) = ([], nil)
        if let environmentToken { context = try environment(environmentToken, into: &meta) }
        var diagnostic = try diagnostic(body.token, kind: body.kind)
        diagnostic.version = "2.0.0"
        diagnostic.meta = meta
        diagnostic.appStates = context.states
        diagnostic.signpostData = context.signpostData
        var payload = DiagnosticPayload(begin: begin, end: end, diagnostics: [diagnostic])
        payload.format = .v2
        return payload
    }
}
