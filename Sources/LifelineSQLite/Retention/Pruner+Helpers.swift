import LifelineModel
import LifelineStorage

/// Counting, horizons and id lists for the pruner's steps.
extension Pruner {
    /// Counts what a run as of `cutoffs` would remove (the dry run), inside one read transaction.
    static func count(_ cutoffs: Cutoffs, into report: PruneReport, on connection: Connection) throws(StoreError)
        -> PruneReport
    {
        var report = report
        func count(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> Int {
            Int(try connection.first(sql, values) { $0.int64(0) } ?? 0)
        }
        if let data = cutoffs.data, let dataText = cutoffs.dataText {
            for table in rollupTables {
                report.rollupRows += try count("SELECT count(*) FROM \(table) WHERE day < ?1", [.integer(Int64(data))])
            }
            report.payloads = try count("SELECT count(*) FROM payloads WHERE day < ?1", [.text(dataText)])
            for table in Self.rawTables {
                report.rawDocuments += try count(
                    "SELECT count(*) FROM \(table) r JOIN payloads p ON p.id = r.payload WHERE p.day < ?1",
                    [.text(dataText)])
            }
            report.crashGroups = try count(
                """
                SELECT count(*) FROM crash_groups g WHERE g.first_seen < ?1
                    AND NOT EXISTS (SELECT 1 FROM diagnostics d WHERE d.crash_group = g.id AND d.occurred_at >= ?1)
                """, [.integer(Int64(data) * 86_400)])
        }
        if cutoffs.rawBeyondData, let rawText = cutoffs.rawText {
            for table in Self.rawTables {
                report.rawDocuments += try count(
                    "SELECT count(*) FROM \(table) r JOIN payloads p ON p.id = r.payload WHERE p.day >= ?1 AND p.day < ?2",
                    [.text(cutoffs.dataText ?? ""), .text(rawText)])
            }
        }
        if let oldest = cutoffs.idempotency {
            report.idempotencyKeys = try count(
                "SELECT count(*) FROM idempotency_keys WHERE created_at < ?1", [.integer(oldest)])
        }
        if let oldest = cutoffs.alertHistory {
            report.alertHistory = try count("SELECT count(*) FROM alert_history WHERE at < ?1", [.integer(oldest)])
        }
        report.dashboardSessions = try count(
            "SELECT count(*) FROM dashboard_sessions WHERE expires_at < ?1", [.integer(cutoffs.now)])
        report.freePages = try count("PRAGMA freelist_count", [])
        report.pageSize = try count("PRAGMA page_size", [])
        report.autoVacuum = try count("PRAGMA auto_vacuum", []) == 2
        return report
    }

    /// The stored horizon `name` (first day kept), if any.
    static func horizon(_ name: String, on connection: Connection) throws(StoreError) -> Int? {
        try connection.first("SELECT day FROM retention_horizons WHERE name = ?1", [.text(name)]) { Int($0.int64(0)) }
    }

    /// Stores (or, for nil, removes) the horizon `name`.
    static func setHorizon(_ name: String, _ day: Int?, on connection: Connection) throws(StoreError) {
        if let day {
            try connection.run(
                """
                INSERT INTO retention_horizons (name, day) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET day = excluded.day
                """, [.text(name), .integer(Int64(day))])
        } else {
            try connection.run("DELETE FROM retention_horizons WHERE name = ?1", [.text(name)])
        }
    }

    static func jsonArray(_ ids: [Int64]) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }
}
