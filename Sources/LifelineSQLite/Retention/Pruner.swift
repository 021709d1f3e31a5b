import LifelineModel
import LifelineStorage

/// Deletes what the ``RetentionPolicy`` no longer keeps, in many short write transactions.
///
/// Each transaction removes at most ``Options/batchSize`` payloads (or one day of one app's
/// rollups, or a batch of small records) and is followed by ``Options/pause``, so the ingest
/// writer, which waits for SQLite's write lock, gets it between two batches: no long write lock.
///
/// Order, so that nothing is ever seen half-deleted:
/// 1. the `data` horizon (first day kept) is written first; every aggregate query starts its
///    window there (``RollupQuery``), so the days being pruned already answer as empty;
/// 2. the rollup rows of those days, then the payloads (their normalized rows, diagnostics and raw
///    documents go with them: `ON DELETE CASCADE`), then the crash groups left without a
///    diagnostic (the others get their count and first sighting recomputed);
/// 3. the raw documents of the days past `raw_days` (from where the previous run stopped);
/// 4. idempotency records, alert history and expired dashboard sessions by age;
/// 5. free pages beyond ``Options/keepFreeFraction`` of the file are returned to the file system
///    (`PRAGMA incremental_vacuum`, on databases created with `auto_vacuum = INCREMENTAL`);
///    the others are reused by the next inserts, so the file stops growing under steady load.
///
/// Every step is idempotent: an interrupted run is finished by the next one.
package struct Pruner: Sendable {
    package struct Options: Sendable, Equatable {
        /// Payloads deleted per transaction (each takes its normalized rows with it: ~100 rows).
        package var batchSize = 100
        /// Small records (idempotency, alert history, crash groups) per transaction.
        package var recordBatchSize = 2_000
        /// Pause after every transaction, so waiting writers get the lock.
        package var pause: Duration = .milliseconds(20)
        /// Free pages kept for reuse, as a fraction of the file's pages; the rest is returned.
        package var keepFreeFraction = 0.0
        /// Pages returned per transaction.
        package var vacuumStep = 256
        /// Times one transaction is tried again when the write lock stays busy past the busy timeout.
        package var busyRetries = 30

        package init(
            batchSize: Int = 100, recordBatchSize: Int = 2_000, pause: Duration = .milliseconds(20),
            keepFreeFraction: Double = 0, vacuumStep: Int = 256
        ) {
            self.batchSize = max(1, batchSize)
            self.recordBatchSize = max(1, recordBatchSize)
            self.pause = pause
            self.keepFreeFraction = min(max(keepFreeFraction, 0), 1)
            self.vacuumStep = max(1, vacuumStep)
        }
    }

    package let database: Database
    package let policy: RetentionPolicy
    package let options: Options

    package init(database: Database, policy: RetentionPolicy, options: Options = Options()) {
        self.database = database
        self.policy = policy
        self.options = options
    }

    /// The rollup tables, all keyed (app, day, …).
    /// Where raw copies are: as received, and compacted (migration 0023).
    static let rawTables = ["payload_raw", "payload_raw_packed"]
    /// The lookup entries of the payloads in the JSON array `?1`, deleted before them (migration
    /// 0031: `payload_keys` and `payload_days` hold no foreign key, which would need an index by
    /// payload; the door's lookup also checks that the payload it finds still exists).
    /// `?2` is the payloads' app, `?3` their kind (every key column bound: a row value `IN` would
    /// use the first one only).
    static let forgetKeys = """
        DELETE FROM payload_keys WHERE app = ?2
            AND content_hash IN (SELECT content_hash FROM payloads WHERE id IN (SELECT value FROM json_each(?1)))
            AND payload IN (SELECT value FROM json_each(?1))
        """
    static let forgetDays = """
        DELETE FROM payload_days WHERE app = ?2 AND kind = ?3
            AND day IN (SELECT day FROM payloads WHERE id IN (SELECT value FROM json_each(?1)))
            AND payload IN (SELECT value FROM json_each(?1))
        """
    static let rollupTables = [
        "rollup_metrics", "rollup_metrics_by_version", "rollup_bucket_cells", "rollup_buckets_by_version",
        "rollup_diagnostics", "rollup_diagnostics_by_version", "rollup_explorer", "rollup_explorer_by_version",
        "rollup_explorer_by_version_0014",
    ]

    /// The cut-offs of one run, computed once from `now`.
    struct Cutoffs: Sendable {
        /// First day of data kept (days since 1970-01-01), and as `YYYY-MM-DD`.
        var data: Int?
        var dataText: String?
        /// First day of raw documents kept.
        var raw: Int?
        var rawText: String?
        /// Oldest times kept (epoch seconds).
        var idempotency: Int64?
        var alertHistory: Int64?
        var now: Int64

        init(_ policy: RetentionPolicy, now: Int64) {
            self.now = now
            data = RetentionPolicy.firstKeptDay(policy.dataDays, now: now)
            raw = RetentionPolicy.firstKeptDay(policy.rawDays, now: now)
            dataText = data.map(Self.text)
            rawText = raw.map(Self.text)
            idempotency = RetentionPolicy.firstKeptSecond(policy.idempotencyDays, now: now)
            alertHistory = RetentionPolicy.firstKeptSecond(policy.alertHistoryDays, now: now)
        }

        /// `YYYY-MM-DD` of a day number (the format of `payloads.day`).
        static func text(_ day: Int) -> String { UTCDay(epochSeconds: Int64(day) * 86_400).string }

        /// Whether raw documents are pruned beyond what the data pruning removes.
        var rawBeyondData: Bool {
            guard let raw else { return false }
            return data.map { raw > $0 } ?? true
        }
    }

    /// Prunes as of `now` (epoch seconds), calling `progress` after every transaction with the
    /// figures so far. With `dryRun`, only counts what would go (one read transaction).
    package func run(
        now: Int64 = WallClock.nowSeconds(), dryRun: Bool = false,
        progress: @escaping @Sendable (PruneReport) -> Void = { _ in }
    ) async throws -> PruneReport {
        let cutoffs = Cutoffs(policy, now: now)
        var report = PruneReport()
        report.dataKeptFrom = cutoffs.dataText
        report.rawKeptFrom = cutoffs.rawText
        report.dryRun = dryRun
        if dryRun {
            let counted = try await database.onStoreThread { [report] database in
                try database.withConnection { (connection) throws(StoreError) -> PruneReport in
                    try connection.readTransaction { () throws(StoreError) -> PruneReport in
                        try Self.count(cutoffs, into: report, on: connection)
                    }
                }
            }
            progress(counted)
            return counted
        }
        let apps = try await step(&report, progress) { connection throws(StoreError) -> [Int64] in
            try Self.setHorizon("data", cutoffs.data, on: connection)
            return try connection.query("SELECT id FROM apps ORDER BY id") { $0.int64(0) }
        }
        if let data = cutoffs.data, let dataText = cutoffs.dataText {
            for app in apps { try await pruneRollups(app: app, before: data, &report, progress) }
            for app in apps {
                for kind in ["metric", "diagnostic"] {
                    try await prunePayloads(app: app, kind: kind, before: dataText, &report, progress)
                }
            }
            try await pruneCrashGroups(before: Int64(data) * 86_400, &report, progress)
        }
        if cutoffs.rawBeyondData, let raw = cutoffs.raw, let rawText = cutoffs.rawText {
            let previous = try await step(&report, progress) { connection throws(StoreError) -> String in
                try Self.horizon("raw", on: connection).map(Cutoffs.text) ?? ""
            }
            let start = max(previous, cutoffs.dataText ?? "")
            for app in apps {
                for kind in ["metric", "diagnostic"] {
                    try await pruneRaw(app: app, kind: kind, from: start, before: rawText, &report, progress)
                }
            }
            _ = try await step(&report, progress) { connection throws(StoreError) in
                try Self.setHorizon("raw", raw, on: connection)
            }
        }
        if let oldest = cutoffs.idempotency {
            try await deleteRecords(
                """
                DELETE FROM idempotency_keys WHERE (app, key) IN
                    (SELECT app, key FROM idempotency_keys WHERE created_at < ?1 LIMIT ?2)
                """, before: oldest, &report, \.idempotencyKeys, progress)
        }
        if let oldest = cutoffs.alertHistory {
            try await deleteRecords(
                "DELETE FROM alert_history WHERE id IN (SELECT id FROM alert_history WHERE at < ?1 LIMIT ?2)",
                before: oldest, &report, \.alertHistory, progress)
        }
        try await deleteRecords(
            """
            DELETE FROM dashboard_sessions WHERE id_hash IN
                (SELECT id_hash FROM dashboard_sessions WHERE expires_at < ?1 LIMIT ?2)
            """, before: now, &report, \.dashboardSessions, progress)
        try await returnFreePages(&report, progress)
        return report
    }

    // MARK: - Steps

    /// One write transaction on the database's connection (on a store thread), then the pause.
    private func step<T: Sendable>(
        _ report: inout PruneReport, _ progress: @Sendable (PruneReport) -> Void,
        _ body: @escaping @Sendable (Connection) throws(StoreError) -> T
    ) async throws -> T {
        var attempt = 0
        let result: T
        while true {
            do {
                result = try await database.onStoreThread { database in
                    try database.withConnection { (connection) throws(StoreError) -> T in
                        try connection.transaction { () throws(StoreError) -> T in try body(connection) }
                    }
                }
                break
            } catch let error as StoreError where error.code == .unavailable && attempt < options.busyRetries {
                // The write lock stayed busy for the whole busy timeout (ingest at full speed takes
                // it back to back): wait and try again instead of giving up the run.
                attempt += 1
                try await Task.sleep(for: .milliseconds(100 * min(attempt, 20)))
            }
        }
        report.transactions += 1
        progress(report)
        if options.pause > .zero { try await Task.sleep(for: options.pause) }
        return result
    }

    /// Deletes the rollup rows of `app` before day `data`, one day (all tables) per transaction.
    private func pruneRollups(
        app: Int64, before data: Int, _ report: inout PruneReport, _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        while true {
            let removed = try await step(&report, progress) { connection throws(StoreError) -> Int? in
                var oldest: Int64?
                for table in Self.rollupTables {
                    if let day = try connection.first(
                        "SELECT min(day) FROM \(table) WHERE app = ?1", [.integer(app)], { $0.optionalInt64(0) }) ?? nil
                    {
                        oldest = min(oldest ?? day, day)
                    }
                }
                guard let oldest, oldest < Int64(data) else { return nil }
                var removed = 0
                for table in Self.rollupTables {
                    removed += try connection.run(
                        "DELETE FROM \(table) WHERE app = ?1 AND day = ?2", [.integer(app), .integer(oldest)])
                }
                return removed
            }
            guard let removed else { return }
            report.rollupRows += removed
        }
    }

    /// Deletes the payloads of `app` and `kind` before `dataText`, ``Options/batchSize`` at a time.
    private func prunePayloads(
        app: Int64, kind: String, before dataText: String, _ report: inout PruneReport,
        _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        let batch = Int64(options.batchSize)
        while true {
            let (payloads, raw) = try await step(&report, progress) { connection throws(StoreError) -> (Int, Int) in
                let ids = try connection.query(
                    "SELECT id FROM payloads_by_day WHERE app = ?1 AND kind = ?2 AND day < ?3 LIMIT ?4",
                    [.integer(app), .text(kind), .text(dataText), .integer(batch)]
                ) { $0.int64(0) }
                guard !ids.isEmpty else { return (0, 0) }
                let list = SQLValue.text(Self.jsonArray(ids))
                var raw: Int64 = 0
                for table in Self.rawTables {
                    raw +=
                        try connection.first(
                            "SELECT count(*) FROM \(table) WHERE payload IN (SELECT value FROM json_each(?1))", [list]
                        ) { $0.int64(0) } ?? 0
                }
                try connection.run(Self.forgetKeys, [list, .integer(app)])
                try connection.run(Self.forgetDays, [list, .integer(app), .text(kind)])
                let removed = try connection.run(
                    "DELETE FROM payloads WHERE id IN (SELECT value FROM json_each(?1))", [list])
                return (removed, Int(raw))
            }
            guard payloads > 0 else { return }
            report.payloads += payloads
            report.rawDocuments += raw
        }
    }

    /// Recounts the crash groups first seen before `oldest` (the only ones that can have lost
    /// diagnostics) and deletes those left empty.
    private func pruneCrashGroups(
        before oldest: Int64, _ report: inout PruneReport, _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        var after: Int64 = 0
        let batch = Int64(options.recordBatchSize)
        while true {
            let (last, removed) = try await step(&report, progress) {
                [after] connection throws(StoreError) -> (Int64?, Int) in
                let ids = try connection.query(
                    "SELECT id FROM crash_groups WHERE id > ?1 AND first_seen < ?2 ORDER BY id LIMIT ?3",
                    [.integer(after), .integer(oldest), .integer(batch)]
                ) { $0.int64(0) }
                guard let last = ids.last else { return (nil, 0) }
                let list = SQLValue.text(Self.jsonArray(ids))
                try connection.run(
                    """
                    UPDATE crash_groups SET
                        count = (SELECT count(*) FROM diagnostics d WHERE d.crash_group = crash_groups.id),
                        first_seen = coalesce(
                            (SELECT min(occurred_at) FROM diagnostics d WHERE d.crash_group = crash_groups.id),
                            first_seen)
                    WHERE id IN (SELECT value FROM json_each(?1))
                    """, [list])
                let removed = try connection.run(
                    "DELETE FROM crash_groups WHERE id IN (SELECT value FROM json_each(?1)) AND count = 0", [list])
                return (last, removed)
            }
            guard let last else { return }
            after = last
            report.crashGroups += removed
        }
    }

    /// Deletes the raw documents of `app` and `kind` from day `start` to before `rawText`, walking
    /// `payloads_by_day` in (day, id) order with a cursor so no entry is read twice.
    private func pruneRaw(
        app: Int64, kind: String, from start: String, before rawText: String, _ report: inout PruneReport,
        _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        var cursor = (day: start, id: Int64(0))
        let batch = Int64(options.batchSize * 5)
        while true {
            let (next, removed) = try await step(&report, progress) {
                [cursor] connection throws(StoreError) -> ((day: String, id: Int64)?, Int) in
                let rows = try connection.query(
                    """
                    SELECT id, day FROM payloads_by_day
                    WHERE app = ?1 AND kind = ?2 AND day < ?3 AND day >= ?4 AND (day > ?4 OR id > ?5)
                    ORDER BY day, id LIMIT ?6
                    """,
                    [
                        .integer(app), .text(kind), .text(rawText), .text(cursor.day), .integer(cursor.id),
                        .integer(batch),
                    ]
                ) { ($0.int64(0), $0.text(1)) }
                guard let last = rows.last else { return (nil, 0) }
                var removed = 0
                for table in Self.rawTables {
                    removed += try connection.run(
                        "DELETE FROM \(table) WHERE payload IN (SELECT value FROM json_each(?1))",
                        [.text(Self.jsonArray(rows.map(\.0)))])
                }
                return ((last.1, last.0), removed)
            }
            guard let next else { return }
            cursor = next
            report.rawDocuments += removed
        }
    }

    /// Runs `sql` (a `DELETE … LIMIT ?2` of the rows older than `?1`) until it removes nothing.
    private func deleteRecords(
        _ sql: String, before oldest: Int64, _ report: inout PruneReport, _ field: WritableKeyPath<PruneReport, Int>,
        _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        let batch = Int64(options.recordBatchSize)
        while true {
            let removed = try await step(&report, progress) { connection throws(StoreError) -> Int in
                try connection.run(sql, [.integer(oldest), .integer(batch)])
            }
            report[keyPath: field] += removed
            if removed < batch { return }
        }
    }

    /// Returns free pages beyond ``Options/keepFreeFraction`` of the file, a few at a time.
    private func returnFreePages(
        _ report: inout PruneReport, _ progress: @escaping @Sendable (PruneReport) -> Void
    ) async throws {
        let state = try await database.onStoreThread { database in
            try database.withConnection { (connection) throws(StoreError) -> (Int64, Int64, Int64, Int64) in
                (
                    try connection.first("PRAGMA auto_vacuum") { $0.int64(0) } ?? 0,
                    try connection.first("PRAGMA freelist_count") { $0.int64(0) } ?? 0,
                    try connection.first("PRAGMA page_count") { $0.int64(0) } ?? 0,
                    try connection.first("PRAGMA page_size") { $0.int64(0) } ?? 0
                )
            }
        }
        report.autoVacuum = state.0 == 2
        report.freePages = Int(state.1)
        report.pageSize = Int(state.3)
        guard report.autoVacuum else { return }
        let keep = Int(Double(state.2) * options.keepFreeFraction)
        var free = report.freePages
        while free > keep {
            let pages = min(options.vacuumStep, free - keep)
            let left = try await step(&report, progress) { connection throws(StoreError) -> Int in
                try connection.execute("PRAGMA incremental_vacuum(\(pages))")
                return Int(try connection.first("PRAGMA freelist_count") { $0.int64(0) } ?? 0)
            }
            guard left < free else { return }  // nothing returned (pages freed meanwhile by others)
            free = left
            report.returnedPages = report.freePages - free
        }
    }
}
