import LifelineModel
import LifelineStorage
import PostgresNIO

/// Retention on PostgreSQL, the policy of the SQLite store (``RetentionPolicy``): raw documents,
/// diagnostics and frames go by dropping their day partitions; payloads older than `data_days`
/// (with what is left of their diagnostics in the default partitions), rollup rows and emptied
/// crash groups in short transactions; old idempotency records, alert history and expired
/// dashboard sessions by one statement each. Safe beside running nodes: crash-group counts are
/// decremented (not recounted), so a concurrent ingest of the same group is not lost.
extension PostgresStore {
    /// The rollup tables, all keyed (app, day, …): every figure at the fine and the version level,
    /// some per OS and device too.
    static let rollupTables =
        [
            "usage_rollup", "exit_cells", "signpost_cells", "bucket_cells", "diagnostic_rollup", "explorer_cells",
        ]
        .flatMap { [$0, $0 + "_v"] } + RollupRows.osDeviceTables.sorted().map { $0 + "_od" }

    /// Applies `policy` as of `now` (epoch seconds); `progress` is told after each transaction.
    /// A dry run counts what would go and removes nothing.
    package func prune(
        policy: RetentionPolicy, now: Int64 = WallClock.nowSeconds(), dryRun: Bool = false, batchSize: Int = 1_000,
        progress: @escaping @Sendable (PruneReport) -> Void = { _ in }
    ) async throws -> PruneReport {
        // A raw copy is the only source of a document the fold has not reached: fold first.
        if !dryRun { try await foldAll() }
        let data = RetentionPolicy.firstKeptDay(policy.dataDays, now: now).flatMap { UTCDay(ordinal: $0) }
        let raw = RetentionPolicy.firstKeptDay(policy.rawDays, now: now).flatMap { UTCDay(ordinal: $0) }
        var report = PruneReport()
        report.dataKeptFrom = data?.string
        report.rawKeptFrom = raw?.string
        report.dryRun = dryRun
        if let data {
            let cut = data.string
            for table in Self.rollupTables {
                report.rollupRows += try await count(
                    dryRun
                        ? "SELECT count(*) FROM \(table) WHERE day < $1::date"
                        : "WITH d AS (DELETE FROM \(table) WHERE day < $1::date RETURNING 1) SELECT count(*) FROM d",
                    cut)
                report.transactions += 1
                progress(report)
            }
            if dryRun {
                report.payloads = try await count("SELECT count(*) FROM payloads WHERE day < $1::date", cut)
            } else {
                // A day's diagnostics, frames and their states go whole with its partitions first.
                for day in try await partitions(of: "diagnostics") where day < cut {
                    report.crashGroups += try await dropDiagnostics(day: day)
                    report.transactions += 1
                    progress(report)
                }
                while try await prunePayloads(before: cut, limit: max(1, batchSize), &report) {
                    progress(report)
                }
            }
        }
        // Raw documents of pruned payloads go too: the later of the two cut-offs.
        if let horizon = [data, raw].compactMap({ $0 }).max(by: { $0.ordinal < $1.ordinal }) {
            for day in try await partitions(of: "payload_raw") where (UTCDay(day)?.ordinal ?? .max) < horizon.ordinal {
                let name = "payload_raw_" + day.replacingOccurrences(of: "-", with: "")
                report.rawDocuments += try await count("SELECT count(*) FROM \(name)")
                if !dryRun {
                    try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(name)"), logger: logger)
                    partitions.withLock { _ = $0.remove(day) }
                }
                report.transactions += 1
            }
            report.rawDocuments += try await count(
                dryRun
                    ? "SELECT count(*) FROM payload_raw_default WHERE day < $1::date"
                    : "WITH d AS (DELETE FROM payload_raw_default WHERE day < $1::date RETURNING 1) SELECT count(*) FROM d",
                horizon.string)
            report.transactions += 1
            progress(report)
        }
        if let oldest = RetentionPolicy.firstKeptSecond(policy.idempotencyDays, now: now) {
            report.idempotencyKeys = try await count(
                dryRun
                    ? "SELECT count(*) FROM idempotency_keys WHERE created_at < $1"
                    : "WITH d AS (DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING 1) SELECT count(*) FROM d",
                oldest)
            report.transactions += 1
        }
        if let oldest = RetentionPolicy.firstKeptSecond(policy.alertHistoryDays, now: now) {
            report.alertHistory = try await count(
                dryRun
                    ? "SELECT count(*) FROM alert_history WHERE at < $1"
                    : "WITH d AS (DELETE FROM alert_history WHERE at < $1 RETURNING 1) SELECT count(*) FROM d",
                oldest)
            report.transactions += 1
        }
        report.dashboardSessions = try await count(
            dryRun
                ? "SELECT count(*) FROM dashboard_sessions WHERE expires_at < $1"
                : "WITH d AS (DELETE FROM dashboard_sessions WHERE expires_at < $1 RETURNING 1) SELECT count(*) FROM d",
            now)
        report.transactions += 1
        progress(report)
        return report
    }

    /// Drops the diagnostics and frames partitions of `day` and deletes its diagnostics' states,
    /// in one transaction, after decrementing the crash groups by what they lose; returns the
    /// crash groups left empty (deleted).
    private func dropDiagnostics(day: String) async throws -> Int {
        let logger = self.logger
        let suffix = day.replacingOccurrences(of: "-", with: "")
        return try await client.withTransaction(logger: logger) { connection -> Int in
            var lost: [Int64: Int64] = [:]
            for try await (group, count) in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT crash_group, count(*) FROM diagnostics_\(suffix) GROUP BY crash_group"),
                logger: logger
            ).decode((Int64, Int64).self) {
                lost[group] = count
            }
            try await connection.query("DELETE FROM diagnostic_states WHERE day = \(day)::date", logger: logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS diagnostic_frames_\(suffix)"), logger: logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS diagnostics_\(suffix)"), logger: logger)
            return try await Self.decrement(lost, on: connection, logger: logger)
        }
    }

    /// Subtracts `lost` diagnostics from their crash groups (in id order: concurrent writers lock
    /// groups too) and deletes the groups left empty; returns how many.
    private static func decrement(
        _ lost: [Int64: Int64], on connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        guard !lost.isEmpty else { return 0 }
        let groups = lost.keys.sorted()
        let counts = groups.map { lost[$0] ?? 0 }
        try await connection.query(
            """
            UPDATE crash_groups g SET count = g.count - u.n
            FROM unnest(\(groups)::bigint[], \(counts)::bigint[]) AS u (id, n) WHERE g.id = u.id
            """, logger: logger)
        for try await removed in try await connection.query(
            """
            WITH d AS (DELETE FROM crash_groups WHERE id = ANY(\(groups)) AND count <= 0 RETURNING 1)
            SELECT count(*) FROM d
            """, logger: logger
        ).decode(Int64.self) {
            return Int(removed)
        }
        return 0
    }

    /// Deletes up to `limit` payloads of days before `cut` in one transaction, with what is left
    /// of their diagnostics in the default partitions (frames and states too; raw rows go with
    /// their day's partition); decrements their crash groups and deletes those left empty. False
    /// when there was nothing left to delete.
    private func prunePayloads(before cut: String, limit: Int, _ report: inout PruneReport) async throws -> Bool {
        let logger = self.logger
        let (payloads, groups) = try await client.withTransaction(logger: logger) { connection -> (Int, Int) in
            var ids: [Int64] = []
            for try await id in try await connection.query(
                "SELECT id FROM payloads WHERE day < \(cut)::date ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED",
                logger: logger
            ).decode(Int64.self) {
                ids.append(id)
            }
            guard !ids.isEmpty else { return (0, 0) }
            var diagnostics: [Int64] = []
            var lost: [Int64: Int64] = [:]
            for try await (id, group) in try await connection.query(
                """
                DELETE FROM diagnostics WHERE day < \(cut)::date AND payload = ANY(\(ids)) RETURNING id, crash_group
                """, logger: logger
            ).decode((Int64, Int64).self) {
                diagnostics.append(id)
                lost[group, default: 0] += 1
            }
            if !diagnostics.isEmpty {
                try await connection.query(
                    "DELETE FROM diagnostic_frames WHERE day < \(cut)::date AND diagnostic = ANY(\(diagnostics))",
                    logger: logger)
                try await connection.query(
                    "DELETE FROM diagnostic_states WHERE day < \(cut)::date AND diagnostic = ANY(\(diagnostics))",
                    logger: logger)
            }
            let emptied = try await Self.decrement(lost, on: connection, logger: logger)
            try await connection.query("DELETE FROM payloads WHERE id = ANY(\(ids))", logger: logger)
            return (ids.count, emptied)
        }
        report.payloads += payloads
        report.crashGroups += groups
        report.transactions += 1
        return payloads > 0
    }

    /// The single count a statement returns, its one bind being `value` (if any).
    private func count(_ sql: String, _ value: (any PostgresEncodable & Sendable)? = nil) async throws -> Int {
        var binds = PostgresBindings()
        if let value { try binds.append(value) }
        for try await number in try await client.query(
            PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger
        ).decode(Int64.self) {
            return Int(number)
        }
        return 0
    }
}
