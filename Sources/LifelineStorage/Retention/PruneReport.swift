/// What one pruning run removed (or, for a dry run, would remove).
package struct PruneReport: Sendable, Equatable, Encodable {
    /// The first day of data kept (`YYYY-MM-DD`); nil when data is kept forever.
    package var dataKeptFrom: String?
    /// The first day whose raw documents are kept; nil when they are kept forever.
    package var rawKeptFrom: String?
    /// Metric and diagnostic payloads removed with their normalized rows and diagnostics.
    package var payloads = 0
    /// Raw documents removed (those of the removed payloads included).
    package var rawDocuments = 0
    /// Rows of the rollup tables removed (days before ``dataKeptFrom``).
    package var rollupRows = 0
    /// Crash groups removed because none of their diagnostics is left.
    package var crashGroups = 0
    /// Idempotency records removed.
    package var idempotencyKeys = 0
    /// Alert state changes removed from the history.
    package var alertHistory = 0
    /// Expired dashboard sessions removed.
    package var dashboardSessions = 0
    /// Free pages of the file before they were returned, and pages returned to the file system
    /// (incremental vacuum); a database created before `auto_vacuum` was set keeps its free pages
    /// for reuse (``autoVacuum`` false).
    package var freePages = 0
    package var returnedPages = 0
    package var autoVacuum = false
    /// Page size of the file, for the byte figures.
    package var pageSize = 0
    /// Write transactions used (each one short).
    package var transactions = 0
    /// Whether this was a dry run (nothing removed).
    package var dryRun = false

    package init() {}

    enum CodingKeys: String, CodingKey {
        case dataKeptFrom = "data_kept_from"
        case rawKeptFrom = "raw_kept_from"
        case payloads
        case rawDocuments = "raw_documents"
        case rollupRows = "rollup_rows"
        case crashGroups = "crash_groups"
        case idempotencyKeys = "idempotency_records"
        case alertHistory = "alert_history"
        case dashboardSessions = "dashboard_sessions"
        case freePages = "free_pages"
        case returnedPages = "returned_pages"
        case autoVacuum = "auto_vacuum"
        case pageSize = "page_size"
        case transactions
        case dryRun = "dry_run"
    }

    /// Everything removed, in one line.
    package var summary: String {
        let verb = dryRun ? "would remove" : "removed"
        var parts = [
            "\(payloads) payloads", "\(rawDocuments) raw documents", "\(rollupRows) rollup rows",
            "\(crashGroups) crash groups", "\(idempotencyKeys) idempotency records",
            "\(alertHistory) alert history entries", "\(dashboardSessions) expired sessions",
        ]
        if !dryRun && pageSize > 0 {
            parts.append("returned \(returnedPages) of \(freePages) free pages (\(returnedPages * pageSize) bytes)")
        }
        return "\(verb) " + parts.joined(separator: ", ")
    }
}
