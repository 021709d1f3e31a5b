/// One measurement string, parsed.
package struct Measurement: Sendable, Equatable {
    /// The value in ``unit``; `nil` when the raw text could not be parsed.
    package var value: Double?
    /// The canonical unit; `nil` when the raw text could not be parsed.
    package var unit: MeasurementUnit?
    /// The text as it appeared in the document.
    package var raw: String

    package init(value: Double?, unit: MeasurementUnit?, raw: String) {
        self.value = value
        self.unit = unit
        self.raw = raw
    }
}
