/// What an API key may do.
package enum Role: String, Sendable, Equatable, CaseIterable {
    /// Upload payloads for one app; nothing else.
    case ingest
    /// Read queries, reports and metrics (optionally for one app only).
    case read
    /// Everything, including key management; never scoped to an app.
    case admin
    /// Upload debug symbols (dSYMs) for one app, from CI; nothing else.
    case symbols
}
