/// What one document of a request body decoded into.
package enum DocumentContent: Sendable, Equatable {
    case metric(MetricPayload)
    case diagnostic(DiagnosticPayload)
}
