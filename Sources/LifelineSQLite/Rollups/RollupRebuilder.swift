import LifelineStorage

/// Recomputes every rollup table from the normalized rows, inside the caller's transaction.
///
/// Diagnostics are aggregated in SQL, and their version level derived from the fine one. Usage,
/// exit counts and signpost totals (summed per cell in SQL) and the histogram buckets (decoded
/// with ``HistogramCodec``) go through the same ``RollupDeltas`` and ``RollupFlusher`` as the
/// writer's, a chunk of rows at a time, so the packed cells of both levels are built by the same
/// merge the writer uses.
enum RollupRebuilder {
    /// `payloads.day` (`YYYY-MM-DD`) as days since 1970-01-01.
    private static let payloadDay = "CAST(julianday(p.day) - 2440587.5 AS INTEGER)"
    private static let dims = "coalesce(p.app_version, 0), coalesce(p.os_version, 0), coalesce(p.device_type, 0)"
    /// Rows added to the deltas per flush (bounds memory on large databases).
    private static let chunk = 5_000

    /// Migration 0004: every rollup table but the fine buckets, which do not exist yet (0012).
    static func rebuild(on connection: Connection) throws(StoreError) {
        let fineBuckets: RollupFlusher.FineBuckets = .absent
        for level in RollupLevel.allCases {
            for table in level.tables where table != RollupLevel.fine.bucketTable {
                try connection.execute("DELETE FROM \(table)")
            }
        }
        try rebuildMetrics(on: connection, fineBuckets: fineBuckets)
        try rebuildBuckets(on: connection, fineBuckets: fineBuckets)
        try countDiagnostics(on: connection)
    }

    /// Counts the stored diagnostics into the fine cells, then sums the version cells from them:
    /// every diagnostic (a rebuild), or those of one app from one day on and of payloads up to an
    /// id (a refold; the cells of those days must have been deleted). Returns the fine cells written.
    @discardableResult
    static func countDiagnostics(
        on connection: Connection, app: Int64? = nil, fromDay: Int64? = nil, throughPayload: Int64? = nil
    ) throws(StoreError) -> Int {
        let scope: [SQLValue] = [
            app.map { .integer($0) } ?? .null, fromDay.map { .integer($0) } ?? .null,
            throughPayload.map { .integer($0) } ?? .null,
        ]
        let cells = try connection.run(
            """
            INSERT INTO rollup_diagnostics (app, day, app_version, os_version, device_type, kind, crash_group, count)
            SELECT p.app, (d.occurred_at - ((d.occurred_at % 86400) + 86400) % 86400) / 86400 AS d_day,
                coalesce(d.app_version, 0), coalesce(d.os_version, 0), coalesce(d.device_type, 0),
                d.kind, d.crash_group, count(*)
            FROM diagnostics d JOIN payloads p ON p.id = d.payload
            WHERE (?1 IS NULL OR p.app = ?1) AND (?2 IS NULL OR d_day >= ?2) AND (?3 IS NULL OR p.id <= ?3)
            GROUP BY 1, 2, 3, 4, 5, 6, 7
            """, scope)
        try connection.run(
            """
            INSERT INTO rollup_diagnostics_by_version (app, day, app_version, kind, crash_group, count)
            SELECT app, day, app_version, kind, crash_group, sum(count) FROM rollup_diagnostics
            WHERE (?1 IS NULL OR app = ?1) AND (?2 IS NULL OR day >= ?2) GROUP BY 1, 2, 3, 4, 5
            """, Array(scope.prefix(2)))
        return cells
    }

    /// Usage, exit counts and signpost totals (clamped at 0 as the writer does) per cell, into the metric cells.
    /// Migration 0012: the bucket cells of both levels from the normalized histograms (the fine
    /// level is new; the version level is rebuilt beside it from the same rows).
    static func rebuildBuckets(on connection: Connection) throws(StoreError) {
        try connection.execute("DELETE FROM rollup_buckets")
        try connection.execute("DELETE FROM rollup_buckets_by_version")
        try rebuildBuckets(on: connection, fineBuckets: .perSource)
    }

    /// Migration 0021: the rows of `rollup_buckets` (one per fine cell and source) packed into
    /// `rollup_bucket_cells` (one per cell, ``BucketCell``), then `rollup_buckets` dropped.
    static func packFineBuckets(on connection: Connection) throws(StoreError) {
        let rows = try Statement(
            database: connection.handle,
            sql: """
                SELECT app, day, app_version, os_version, device_type, source, buckets FROM rollup_buckets
                ORDER BY app, day, app_version, os_version, device_type, source
                """,
            persistent: false)
        let insert = try Statement(
            database: connection.handle,
            sql: """
                INSERT INTO rollup_bucket_cells (app, day, app_version, os_version, device_type, sources)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            persistent: false)
        var current: RollupDeltas.Cell?
        var sources: [(source: Int64, buckets: [UInt8])] = []
        func write() throws(StoreError) {
            guard let cell = current, !sources.isEmpty else { return }
            try insert.bind([
                .integer(cell.app), .integer(cell.day), .integer(cell.version), .integer(cell.os),
                .integer(cell.device), .blob(BucketCell.encode(sources)),
            ])
            try insert.runToCompletion()
            sources.removeAll(keepingCapacity: true)
        }
        while try rows.step() {
            let cell = Self.cell(rows)
            if cell != current {
                try write()
                current = cell
            }
            sources.append((rows.int64(5), rows.blob(6)))
        }
        try write()
        try connection.execute("DROP TABLE rollup_buckets")
    }

    private static func rebuildMetrics(on connection: Connection, fineBuckets: RollupFlusher.FineBuckets)
        throws(StoreError)
    {
        // Device-days: every metric payload, but a 2.0.0 snapshot (device_day 0, from migration 0007 on).
        let hasDeviceDay =
            try connection.first(
                "SELECT count(*) FROM pragma_table_info('payloads') WHERE name = 'device_day'", [], { $0.int64(0) })
            == 1
        let deviceDays = hasDeviceDay ? "sum(p.device_day)" : "count(*)"
        var deltas = RollupDeltas()
        var rows = 0
        let usage = try Statement(
            database: connection.handle,
            sql: """
                SELECT p.app, \(payloadDay), \(dims), \(deviceDays), total(fg.value), total(bg.value)
                FROM payloads p
                LEFT JOIN scalar_metrics fg ON fg.payload = p.id
                    AND fg.metric = (SELECT id FROM metric_names WHERE value = ?1)
                LEFT JOIN scalar_metrics bg ON bg.payload = p.id
                    AND bg.metric = (SELECT id FROM metric_names WHERE value = ?2)
                WHERE p.kind = 'metric'
                GROUP BY 1, 2, 3, 4, 5
                """,
            persistent: false)
        try usage.bind([.text(RollupStage.foregroundTime), .text(RollupStage.backgroundTime)])
        while try usage.step() {
            deltas.append(
                RollupDeltas.Usage(
                    cell: cell(usage), payloads: usage.int64(5), foregroundMilliseconds: usage.optionalDouble(6) ?? 0,
                    backgroundMilliseconds: usage.optionalDouble(7) ?? 0))
            rows += 1
            if rows % chunk == 0 { try flush(&deltas, on: connection, fineBuckets: fineBuckets) }
        }
        let exits = try Statement(
            database: connection.handle,
            sql: """
                SELECT p.app, \(payloadDay), \(dims), e.state, e.reason, sum(e.count)
                FROM exit_counts e JOIN payloads p ON p.id = e.payload
                GROUP BY 1, 2, 3, 4, 5, 6, 7
                """,
            persistent: false)
        while try exits.step() {
            deltas.append(
                RollupDeltas.Exit(
                    cell: cell(exits), state: exits.int64(5), reason: exits.int64(6), count: exits.int64(7)))
            rows += 1
            if rows % chunk == 0 { try flush(&deltas, on: connection, fineBuckets: fineBuckets) }
        }
        let signposts = try Statement(
            database: connection.handle,
            sql: """
                SELECT p.app, \(payloadDay), \(dims), s.category, s.name, sum(max(s.total_count, 0))
                FROM signposts s JOIN payloads p ON p.id = s.payload
                GROUP BY 1, 2, 3, 4, 5, 6, 7
                """,
            persistent: false)
        while try signposts.step() {
            deltas.append(
                RollupDeltas.Signpost(
                    cell: cell(signposts), category: signposts.int64(5), name: signposts.int64(6),
                    count: signposts.int64(7)))
            rows += 1
            if rows % chunk == 0 { try flush(&deltas, on: connection, fineBuckets: fineBuckets) }
        }
        try flush(&deltas, on: connection, fineBuckets: fineBuckets)
    }

    private static func flush(
        _ deltas: inout RollupDeltas, on connection: Connection, fineBuckets: RollupFlusher.FineBuckets
    ) throws(StoreError) {
        try RollupFlusher.flush(deltas, on: connection, fineBuckets: fineBuckets)
        deltas.clear()
    }

    private static func rebuildBuckets(on connection: Connection, fineBuckets: RollupFlusher.FineBuckets)
        throws(StoreError)
    {
        var deltas = RollupDeltas()
        var rows = 0
        let cellColumns = "p.app, \(payloadDay), \(dims)"
        let histograms = try Statement(
            database: connection.handle,
            sql: "SELECT \(cellColumns), h.metric, h.buckets FROM histograms h JOIN payloads p ON p.id = h.payload",
            persistent: false)
        while try histograms.step() {
            let cell = Self.cell(histograms)
            for bucket in try HistogramCodec.decode(histograms.blob(6)) {
                deltas.appendBucket(
                    cell: cell, source: histograms.int64(5), start: bucket.start, end: bucket.end, count: bucket.count)
            }
            rows += 1
            if rows % chunk == 0 { try flush(&deltas, on: connection, fineBuckets: fineBuckets) }
        }
        // Signpost duration histograms, keyed `signpost:<category>/<name>` in metric_names.
        let interner = Interner()
        let signposts = try Statement(
            database: connection.handle,
            sql: """
                SELECT \(cellColumns), c.value, n.value, s.durations
                FROM signposts s JOIN payloads p ON p.id = s.payload
                JOIN signpost_categories c ON c.id = s.category JOIN signpost_names n ON n.id = s.name
                WHERE s.durations IS NOT NULL
                """,
            persistent: false)
        var sources: [String: Int64] = [:]
        while try signposts.step() {
            let cell = Self.cell(signposts)
            let key = RollupStage.signpostSource(category: signposts.text(5), name: signposts.text(6))
            let source: Int64
            if let known = sources[key] {
                source = known
            } else {
                guard let id = try interner.id(.metricName, key, on: connection) else { continue }
                sources[key] = id
                source = id
            }
            for bucket in try HistogramCodec.decode(signposts.blob(7)) {
                deltas.appendBucket(
                    cell: cell, source: source, start: bucket.start, end: bucket.end, count: bucket.count)
            }
            rows += 1
            if rows % chunk == 0 { try flush(&deltas, on: connection, fineBuckets: fineBuckets) }
        }
        try flush(&deltas, on: connection, fineBuckets: fineBuckets)
    }

    private static func cell(_ row: Statement) -> RollupDeltas.Cell {
        RollupDeltas.Cell(
            app: row.int64(0), day: row.int64(1), version: row.int64(2), os: row.int64(3), device: row.int64(4))
    }

}
