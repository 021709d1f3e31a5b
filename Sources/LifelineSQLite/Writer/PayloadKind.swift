/// Whether a stored payload is a metric or a diagnostic document.
package enum PayloadKind: String, Sendable, Equatable, CaseIterable {
    case metric
    case diagnostic
}
