/// Decodes request bodies holding MetricKit JSON (`jsonRepresentation()` of `MXMetricPayload` /
/// `MXDiagnosticPayload`) into model values, without Foundation's JSON machinery.
///
/// Accepted shapes (DOMAIN.md §1): a metric payload, a diagnostic payload, a bare diagnostic
/// (`version` / `callStackTree` / `diagnosticMetaData`, decoded as a ``DiagnosticPayload`` with nil
/// timestamps), an iOS 27 `MetricReport` or `DiagnosticReport` (METRICKIT-27.md), or a JSON array
/// of those (formats mixed), each element its own ``DecodedDocument``.
///
/// The body is parsed once into a flat token tape (``JSONTape``, iterative, depth- and
/// string-length-limited), then each document is read from the tape; strings are only
/// materialized when a value needs one.
package enum MetricKitDecoder {
    /// Decodes every document of a body.
    ///
    /// - Parameters:
    ///   - bytes: the (decompressed) body.
    ///   - family: `.metric` accepts metric payloads only, `.diagnostic` diagnostic payloads and bare
    ///     diagnostics only, `nil` detects each document's family.
    ///   - limits: nesting depth, string length, frames per tree and documents per body.
    /// - Returns: the documents in body order; each ``DecodedDocument/byteRange`` covers exactly the
    ///   bytes of that JSON value (surrounding whitespace excluded), for content hashing.
    /// - Throws: ``DecodeError`` — `.malformedJSON` (with line and column), `.notMetricKit` (valid
    ///   JSON of the wrong shape or family, naming the document), `.limitExceeded`.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, family: DocumentFamily?, limits: DecodeLimits = .init()
    ) throws(DecodeError) -> [DecodedDocument] {
        let tape = try JSONTape(parsing: bytes, limits: limits)
        let root = 0
        switch tape.kind(root) {
        case .object:
            var budget = BodyBudget(limits)
            return [try decodeDocument(tape, root, number: 1, family: family, limits: limits, budget: &budget)]
        case .array:
            let count = Int(tape.tokens[root].count)
            guard count > 0 else {
                throw DecodeError(code: .notMetricKit, message: "no documents: the body is an empty array", offset: 0)
            }
            guard count <= limits.maxDocuments else {
                throw DecodeError(
                    code: .limitExceeded,
                    message: "\(count) documents in one body, more than the limit of \(limits.maxDocuments)",
                    offset: nil)
            }
            var documents: [DecodedDocument] = []
            documents.reserveCapacity(count)
            var element = root + 1
            var number = 1
            var budget = BodyBudget(limits)
            while element < tape.next(root) {
                documents.append(
                    try decodeDocument(tape, element, number: number, family: family, limits: limits, budget: &budget))
                element = tape.next(element)
                number += 1
            }
            return documents
        default:
            throw DecodeError(
                code: .notMetricKit,
                message: "document 1: expected a MetricKit JSON object, found \(tape.kindName(root))",
                offset: tape.byteRange(root).lowerBound)
        }
    }

    /// Decodes every document of a body held in an array; see ``decode(_:family:limits:)-(UnsafeRawBufferPointer,_,_)``.
    package static func decode(
        _ bytes: [UInt8], family: DocumentFamily?, limits: DecodeLimits = .init()
    ) throws(DecodeError) -> [DecodedDocument] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DecodeError) in try decode(buffer, family: family, limits: limits) }
        }
        return try result.get()
    }

    /// Decodes a standalone `callStackTree` object (or a diagnostic holding one under `callStackTree`).
    package static func decodeCallStackTree(
        _ bytes: [UInt8], limits: DecodeLimits = .init()
    ) throws(DecodeError) -> CallStackTree {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DecodeError) -> CallStackTree in
                let tape = try JSONTape(parsing: buffer, limits: limits)
                guard tape.kind(0) == .object else {
                    throw DecodeError(
                        code: .notMetricKit, message: "expected a callStackTree object, found \(tape.kindName(0))",
                        offset: 0)
                }
                let tree = tape.member(0, "callStackTree").flatMap { tape.kind($0) == .object ? $0 : nil } ?? 0
                guard tape.member(tree, "callStacks") != nil else {
                    throw DecodeError(code: .notMetricKit, message: "missing callStacks in callStackTree", offset: 0)
                }
                var decoder = DocumentDecoder(tape: tape, limits: limits)
                return try decoder.callStackTree(tree)
            }
        }
        return try result.get()
    }

    // MARK: - One document

    private enum Shape {
        case metric, diagnosticPayload, bareDiagnostic, metricReport, diagnosticReport
    }

    private static func decodeDocument(
        _ tape: JSONTape, _ t: Int, number: Int, family: DocumentFamily?, limits: DecodeLimits,
        budget: inout BodyBudget
    ) throws(DecodeError) -> DecodedDocument {
        let range = tape.byteRange(t)
        guard tape.kind(t) == .object else {
            throw DecodeError(
                code: .notMetricKit,
                message: "document \(number): expected a MetricKit JSON object, found \(tape.kindName(t))",
                offset: range.lowerBound)
        }
        let shape = try detectShape(tape, t, number: number, family: family)
        switch (family, shape) {
        case (.metric, .diagnosticPayload), (.metric, .bareDiagnostic), (.metric, .diagnosticReport):
            throw DecodeError(
                code: .notMetricKit,
                message: "document \(number): a diagnostic was posted where a metric payload is expected",
                offset: range.lowerBound)
        case (.diagnostic, .metric), (.diagnostic, .metricReport):
            throw DecodeError(
                code: .notMetricKit,
                message: "document \(number): a metric payload was posted where a diagnostic payload is expected",
                offset: range.lowerBound)
        default:
            break
        }
        var decoder = DocumentDecoder(tape: tape, limits: limits, document: number, budget: budget)
        let content: DocumentContent
        switch shape {
        case .metric:
            content = .metric(try decoder.metricPayload(t))
        case .diagnosticPayload:
            content = .diagnostic(try decoder.diagnosticPayload(t))
        case .bareDiagnostic:
            let diagnostic = try decoder.diagnostic(t, kind: nil)
            content = .diagnostic(DiagnosticPayload(begin: nil, end: nil, diagnostics: [diagnostic]))
        case .metricReport:
            content = .metric(try decoder.metricReport(t))
        case .diagnosticReport:
            content = .diagnostic(try decoder.diagnosticReport(t))
        }
        budget = decoder.budget
        return DecodedDocument(
            content: content, byteRange: range, unparsedMeasurements: decoder.unparsed,
            droppedValues: decoder.dropped)
    }

    /// Decides the shape of a document from its top-level keys.
    ///
    /// - an iOS 27 report (`"version": "2.…"` or `timeRange`/`environment`) with interval or state
    ///   entries → metric report; with a per-kind diagnostic key → diagnostic report;
    /// - any of the five diagnostic arrays → diagnostic payload;
    /// - `diagnosticMetaData` or `callStackTree` → bare diagnostic;
    /// - a timestamp plus `metaData`, `appVersion` or an object-valued section → metric payload;
    /// - timestamps only (a diagnostic payload whose arrays were all empty, or an empty metric
    ///   window) → the requested family, diagnostic when auto-detecting.
    private static func detectShape(
        _ tape: JSONTape, _ t: Int, number: Int, family: DocumentFamily?
    ) throws(DecodeError) -> Shape {
        if let version = DocumentDecoder.topLevelVersion(tape, t), let major = version.split(separator: ".").first,
            let majorVersion = Int(major), majorVersion > 2
        {
            throw DecodeError(
                code: .unsupportedVersion,
                message: "document \(number): MetricKit report version \(version) is not one this release reads "
                    + "(1.x jsonRepresentation, 2.x reports); the document was not stored",
                offset: tape.byteRange(t).lowerBound)
        }
        switch DocumentDecoder.reportShape(tape, t) {
        case .metric: return .metricReport
        case .diagnostic: return .diagnosticReport
        case nil: break
        }
        var diagnosticArrays = false
        var bare = false
        var timestamps = false
        var metricKeys = false
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "timeStampBegin") || tape.keyEquals(k, "timeStampEnd") {
                timestamps = true
            } else if tape.keyEquals(k, "metaData") || tape.keyEquals(k, "appVersion") {
                metricKeys = true
            } else if tape.keyEquals(k, "diagnosticMetaData") || tape.keyEquals(k, "callStackTree") {
                bare = true
            } else if DocumentDecoder.diagnosticArrays.contains(where: { tape.keyEquals(k, $0.key) }) {
                diagnosticArrays = true
            } else if tape.kind(v) == .object || tape.keyEquals(k, "signpostMetrics") {
                metricKeys = true
            }
        }
        if diagnosticArrays { return .diagnosticPayload }
        if bare { return .bareDiagnostic }
        if timestamps && metricKeys { return .metric }
        if timestamps { return family == .metric ? .metric : .diagnosticPayload }
        let expected: String
        switch family {
        case .metric: expected = "timeStampBegin/timeStampEnd/metaData of a metric payload"
        case .diagnostic: expected = "timeStampBegin/timeStampEnd and diagnostic arrays, or diagnosticMetaData"
        case nil: expected = "timeStampBegin/metaData (metric payload) or diagnostic arrays/diagnosticMetaData"
        }
        let what = tape.tokens[t].count == 0 ? "an empty object" : "an object without MetricKit keys"
        throw DecodeError(
            code: .notMetricKit, message: "document \(number): missing \(expected); found \(what)",
            offset: tape.byteRange(t).lowerBound)
    }
}
