/// What a refold did.
package struct RefoldReport: Sendable, Equatable, Codable {
    /// Apps refolded.
    package var apps: Int = 0
    /// Metric documents folded again from their raw copies.
    package var documents: Int = 0
    /// Documents whose raw copy could not be read (their figures are gone from the refolded days).
    package var unreadable: Int = 0
    /// Diagnostic rollup cells (app × day × version × OS × device × kind × group) counted again
    /// from the stored diagnostics.
    package var diagnostics: Int = 0
    /// Per app, the first day refolded (`YYYY-MM-DD`); later than asked when raw copies of earlier
    /// days are gone (those days keep their figures as they were).
    package var firstDays: [String: String] = [:]

    package init() {}

    enum CodingKeys: String, CodingKey {
        case apps, documents, unreadable, diagnostics
        case firstDays = "first_days"
    }
}
