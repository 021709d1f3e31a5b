/// The output formats of `lifeline report`; each carries the same figures.
public enum ReportFormat: String, CaseIterable, Sendable {
    case html
    case md
    case json
}
