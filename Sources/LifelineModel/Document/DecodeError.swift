/// Why a body could not be decoded.
package struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// Not well-formed JSON (HTTP 400).
        case malformedJSON = "malformed_json"
        /// Well-formed JSON that is not a MetricKit document of the expected family (HTTP 422).
        case notMetricKit = "not_metrickit"
        /// A decode limit was exceeded (HTTP 413 for size-like limits, 422 otherwise).
        case limitExceeded = "limit_exceeded"
        /// A report of a major version this release does not read, `"version": "3.…"` (HTTP 422):
        /// refused whole, never guessed into the 2.0.0 shape.
        case unsupportedVersion = "unsupported_version"
        /// A 2.0.0 report whose `timeRange.begin` is missing or unreadable (HTTP 422): its day
        /// cannot be known, so it is refused rather than counted under the day it arrived.
        case unreadableTimeRange = "unreadable_time_range"
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
