import LifelineModel
import LifelineStorage

extension Database {
    /// Rebuilds the figures (rollups, explorer cells and per-state rows) of `app` (every app when
    /// `nil`) from day `from` on (every day when `nil`) from the raw documents, in one transaction:
    /// readers see the old figures or the new ones, never a mix.
    ///
    /// Only documents at or below the aggregator's watermark are refolded (the ones above are
    /// the fold's, which carries on). Diagnostics are counted again from their stored rows (their
    /// crash groups keep their ids). Days before the last day of an app with a metric document
    /// whose raw copy is gone (raw retention) keep their figures as they are: there is nothing to
    /// rebuild them from.
    ///
    /// Runs on its own write connection: offline, or beside a running server, whose writer waits
    /// (up to the database timeout, then it answers 503) while the refold holds the write lock.
    /// `chunk`: documents folded between two writes of the figures (tests make it small).
    package func refold(
        app: String? = nil, from: UTCDay? = nil, chunk: Int = 2_000, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(StoreError) -> RefoldReport {
        let connection = try openConnection()
        defer { connection.close() }
        try Migrator(migrations: EmbeddedMigrations.all, now: { 0 }).requireCurrent(connection)
        let writer = BatchWriter(
            connection: connection, foldStages: [StateRowsStage(), RollupStage(), ExplorerStage()])
        var report = RefoldReport()
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let watermark = try connection.first(BatchWriter.readWatermark) { $0.int64(0) } ?? 0
            // The explorer's rows and both rollup levels first reach the watermark (a
            // running server may hold its last documents' in memory): days not refolded then
            // answer every folded document.
            try writer.catchUpHeld()
            let apps: [(id: Int64, bundle: String)] =
                if let app {
                    try connection.query("SELECT id, bundle_id FROM apps WHERE bundle_id = ?", [.text(app)]) {
                        ($0.int64(0), $0.text(1))
                    }
                } else {
                    try connection.query("SELECT id, bundle_id FROM apps ORDER BY id") { ($0.int64(0), $0.text(1)) }
                }
            if let app, apps.isEmpty { throw StoreError(.notFound, "no data for app \(app)") }
            // For the progress line: the metric documents in scope (fewer when raw copies are gone).
            let total =
                try connection.first(
                    """
                    SELECT count(*) FROM payloads WHERE kind = 'metric' AND id <= ?1 AND day >= ?2
                        AND (?3 IS NULL OR app = (SELECT id FROM apps WHERE bundle_id = ?3))
                    """, [.integer(watermark), .text((from ?? .first).string), app.map { .text($0) } ?? .null]
                ) { Int($0.int64(0)) } ?? 0
            var done = 0
            for (appID, bundle) in apps {
                // Days whose raw copies are gone keep their figures.
                let lastRawless: UTCDay? =
                    try connection.first(
                        """
                        SELECT max(p.day) FROM payloads_by_day p LEFT JOIN payload_raw r ON r.payload = p.id
                            LEFT JOIN payload_raw_packed k ON k.payload = p.id
                        WHERE p.app = ? AND p.kind = 'metric' AND r.payload IS NULL AND k.payload IS NULL
                        """, [.integer(appID)]
                    ) { $0.isNull(0) ? nil : UTCDay($0.text(0)) } ?? nil
                var first = from ?? .first
                if let lastRawless, let next = UTCDay(ordinal: lastRawless.ordinal + 1), next > first { first = next }
                report.apps += 1
                report.firstDays[bundle] = first.string
                for level in RollupLevel.allCases {
                    // The explorer's per-metric version rows of 0014 too: refolded into 0016's.
                    let legacy = level == .byVersion ? ["rollup_explorer_by_version_0014"] : []
                    for table in level.tables + [level.table("explorer")] + legacy {
                        try connection.run(
                            "DELETE FROM \(table) WHERE app = ? AND day >= ?",
                            [.integer(appID), .integer(Int64(first.ordinal))])
                    }
                }
                report.diagnostics += try RollupRebuilder.countDiagnostics(
                    on: connection, app: appID, fromDay: Int64(first.ordinal), throughPayload: watermark)
                let payloads = try connection.query(
                    "SELECT id FROM payloads_by_day WHERE app = ? AND kind = 'metric' AND day >= ? AND id <= ? ORDER BY id",
                    [.integer(appID), .text(first.string), .integer(watermark)]
                ) { $0.int64(0) }
                for table in ["payload_states", "state_signposts"] {
                    try connection.run(
                        """
                        DELETE FROM \(table) WHERE payload IN (SELECT id FROM payloads_by_day
                            WHERE app = ? AND kind = 'metric' AND day >= ? AND id <= ?)
                        """, [.integer(appID), .text(first.string), .integer(watermark)])
                }
                for start in stride(from: 0, to: payloads.count, by: max(1, chunk)) {
                    let ids = Array(payloads[start..<min(payloads.count, start + max(1, chunk))])
                    let folded = try writer.foldAgain(ids)
                    report.documents += folded.folded - folded.skipped
                    report.unreadable += folded.skipped
                    done += ids.count
                    progress?(done, total)
                }
            }
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackQuietly()
            throw error
        }
        return report
    }
}

extension Database {
    /// Folds the documents acknowledged and not yet folded (a server stopped before its fold
    /// caught up, or `kill -9`ed): for commands that read the file without a running server.
    /// Returns the number of documents folded. Safe beside a running server: each fold reads and
    /// advances the watermark in its own write transaction, so no document is folded twice.
    @discardableResult
    package func foldPending(batch: Int = 4_096) throws(StoreError) -> Int {
        let connection = try openConnection()
        defer { connection.close() }
        try Migrator(migrations: EmbeddedMigrations.all, now: { 0 }).requireCurrent(connection)
        let writer = BatchWriter(connection: connection)
        var total = 0
        while true {
            let result = try writer.fold(limit: batch)
            total += result.folded
            if !result.more { return total }
        }
    }
}
