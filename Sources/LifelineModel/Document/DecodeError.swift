/// Why a body could not be decoded.
package struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// Not well-formed JSON (HTTP 400).
        case malformedJSON = "malformed_json"
        /// Well-formed JSON that is not a MetricKit document of the expected family (HTTP 422).
        case notMetricKit = "not_metrickit"
        /// A decode limit was exceeded (HTTP 413 for size-like limits, 422 otherwise).
        case limitExceeded = "limit_exceeded"
    }

    package var code: Code
    package var message: String
    /// Byte offset in the body where the problem was found, when known.
    package var offset: Int?

    package init(code: Code, message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    package var description: String {
        if let offset { return "\(code.rawValue): \(message) (at byte \(offset))" }
        return "\(code.rawValue): \(message)"
    }
}
