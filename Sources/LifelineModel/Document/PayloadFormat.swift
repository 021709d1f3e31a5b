/// The JSON format a document was sent in.
package enum PayloadFormat: String, Sendable, Equatable {
    /// `jsonRepresentation()` of `MXMetricPayload` / `MXDiagnosticPayload` (`"version": "1.0.0"` or none).
    case legacy
    /// `JSONEncoder().encode(report)` of iOS 27's `MetricReport` / `DiagnosticReport` (`"version": "2.0.0"`).
    case v2
}
