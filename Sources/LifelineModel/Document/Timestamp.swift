/// A MetricKit timestamp (`"2019-10-21 07:00:00 +0000"` or zoneless, read as UTC).
package struct Timestamp: Sendable, Equatable {
    /// Seconds since 1970-01-01 UTC; `nil` when the text could not be parsed.
    package var epochSeconds: Int64?
    /// The text as it appeared in the document.
    package var raw: String

    package init(epochSeconds: Int64?, raw: String) {
        self.epochSeconds = epochSeconds
        self.raw = raw
    }
}
