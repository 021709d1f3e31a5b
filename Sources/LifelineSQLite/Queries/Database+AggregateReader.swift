import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// The analysis queries, answered from the rollup tables inside one read transaction on one
/// read-only connection (see ``Database/read(_:)``). Synchronous: ``SQLiteAggregateReader`` calls it
/// on a reader thread.
struct SQLiteRollupReader {
    let connection: Connection
    let names: DimensionNames
    /// Where sample frames get their function, file and line from (nil: frames stay as stored).
    var symbols: SymbolSource?

    /// Every app with its payload counts and first and last day.
    func apps() throws -> [AppInfo] {
        let apps = try connection.query("SELECT id, bundle_id FROM apps ORDER BY bundle_id") {
            ($0.int64(0), $0.text(1))
        }
        // Payloads of days before the retention horizon are being pruned: not counted.
        let horizon = try Pruner.horizon("data", on: connection).map(Pruner.Cutoffs.text) ?? ""
        var infos: [AppInfo] = []
        for (id, bundleID) in apps {
            let metric = try counted(app: id, kind: "metric", from: horizon)
            let diagnostic = try counted(app: id, kind: "diagnostic", from: horizon)
            let firsts = [metric.first, diagnostic.first].compactMap { $0 }
            let lasts = [metric.last, diagnostic.last].compactMap { $0 }
            infos.append(
                AppInfo(
                    bundleID: bundleID, metricPayloads: metric.count, diagnosticPayloads: diagnostic.count,
                    firstDay: firsts.min(), lastDay: lasts.max()))
        }
        return infos
    }

    /// The payloads of `app` and `kind` from day `from` on, and their first and last day: the two
    /// parts of `payloads_by_day` (migration 0031) counted apart, since a count through the view's
    /// `UNION ALL` took 2–3× as long over 1,000,000 payloads.
    private func counted(app: Int64, kind: String, from: String) throws -> (count: Int64, first: String?, last: String?)
    {
        let bindings: [SQLValue] = [.integer(app), .text(kind), .text(from)]
        let row = { (row: Statement) in (row.int64(0), row.optionalText(1), row.optionalText(2)) }
        let indexed = try connection.first(
            "SELECT count(*), min(day), max(day) FROM payload_days WHERE app = ? AND kind = ? AND day >= ?",
            bindings, row)
        let tail = try connection.first(
            """
            SELECT count(*), min(day), max(day) FROM payloads
            WHERE id > (SELECT indexed_through FROM aggregation_state WHERE id = 1) AND app = ? AND kind = ? AND day >= ?
            """, bindings, row)
        let parts = [indexed, tail].compactMap { $0 }
        return (
            parts.reduce(0) { $0 + $1.0 }, parts.compactMap { $0.1 }.min(), parts.compactMap { $0.2 }.max()
        )
    }

    /// Whether `bundleID` has a row in `apps`.
    func hasApp(_ bundleID: String) throws -> Bool {
        try connection.first("SELECT 1 FROM apps WHERE bundle_id = ?", [.text(bundleID)]) { $0.int64(0) } != nil
    }

    /// Metric payloads and app time per group, from `rollup_metrics*`.
    func usage(_ scope: Scope) throws -> [UsageRow] {
        if scope.usesAppStates { return try stateUsage(scope) }
        return try aggregate(scope) { (query, connection) throws(StoreError) -> [UsageRow] in
            let sql = query.sql(
                table: "metrics", keys: [], sums: ["sum(payloads)", "total(foreground_ms)", "total(background_ms)"])
            let first = query.firstValueColumn
            return try connection.query(sql, query.bindings) { (row) throws(StoreError) -> UsageRow? in
                guard !row.isNull(first) else { return nil }  // no GROUP BY: one row even when empty
                return UsageRow(
                    key: try query.key(row, names: names, on: connection), payloads: row.int64(first),
                    foregroundMilliseconds: row.optionalDouble(first + 1) ?? 0,
                    backgroundMilliseconds: row.optionalDouble(first + 2) ?? 0)
            }.compactMap { $0 }
        }
    }

    /// Exit counts per group, state and reason, from the packed `exits` of `rollup_metrics*`.
    func exits(_ scope: Scope) throws -> [ExitRow] {
        if scope.usesAppStates { return try stateExits(scope) }
        return try aggregate(scope) { (query, connection) throws(StoreError) -> [ExitRow] in
            var rows: [ExitRow] = []
            let sql = query.cellsSQL(table: "metrics", column: "exits")
            for (group, entries) in try packedSums(
                sql, query.bindings, groupCount: query.firstValueColumn, CountEntry.self, on: connection)
            {
                rows += try exitRows(entries, key: try query.key(ids: group, names: names, on: connection))
            }
            return rows
        }
    }

    /// The exit rows of one group: packed entries (state, reason id, count) named.
    func exitRows(_ entries: [CountEntry], key: GroupKey) throws(StoreError) -> [ExitRow] {
        var rows: [ExitRow] = []
        rows.reserveCapacity(entries.count)
        for entry in entries {
            rows.append(
                ExitRow(
                    key: key, state: entry.a == 0 ? .foreground : .background,
                    reason: try names.name(.exitReason, entry.b, on: connection), count: entry.count))
        }
        return rows
    }

    /// Signpost totals per group, category and name, from the packed `signposts` of `rollup_metrics*`.
    func signposts(_ scope: Scope, categories: [String]) throws -> [SignpostRow] {
        if scope.usesAppStates { return try stateSignposts(scope, categories: categories) }
        return try aggregate(scope) { (query, connection) throws(StoreError) -> [SignpostRow] in
            var wanted: Set<Int64>?
            if !categories.isEmpty {
                let ids = try RollupQuery.ids(categories, .signpostCategory, on: connection).filter { $0 != 0 }
                guard !ids.isEmpty else { return [] }
                wanted = Set(ids)
            }
            var rows: [SignpostRow] = []
            let sql = query.cellsSQL(table: "metrics", column: "signposts")
            for (group, entries) in try packedSums(
                sql, query.bindings, groupCount: query.firstValueColumn, CountEntry.self, on: connection)
            {
                let key = try query.key(ids: group, names: names, on: connection)
                for entry in entries where wanted?.contains(entry.a) ?? true {
                    rows.append(
                        SignpostRow(
                            key: key, category: try names.name(.signpostCategory, entry.a, on: connection),
                            name: try names.name(.signpostName, entry.b, on: connection), count: entry.count))
                }
            }
            return rows
        }
    }

    /// Merged buckets per group, from the packed `rollup_bucket_cells` / `rollup_buckets_by_version` cells.
    func buckets(_ scope: Scope, source: HistogramSource) throws -> [BucketRow] {
        if scope.usesAppStates { return try stateBuckets(scope, source: source) }
        return try aggregate(scope) { (query, connection) throws(StoreError) -> [BucketRow] in
            guard
                let sourceID = try connection.first(
                    Dimension.metricName.selectSQL, [.text(source.storageKey)], { $0.int64(0) })
            else { return [] }
            var bindings = query.bindings
            bindings.append(.integer(sourceID))
            // The fine level packs a cell's sources in one row (``BucketCell``): a cell without
            // this source reads NULL, which adds nothing.
            let sql =
                query.level == .fine
                ? query.cellsSQL(
                    fromTable: RollupLevel.fine.bucketTable, column: "ll_cell_buckets(sources, ?\(bindings.count))")
                : query.cellsSQL(table: "buckets", column: "buckets", extra: " AND source = ?\(bindings.count)")
            var rows: [BucketRow] = []
            for (group, entries) in try packedSums(
                sql, bindings, groupCount: query.firstValueColumn, BucketEntry.self, on: connection)
            {
                let key = try query.key(ids: group, names: names, on: connection)
                for entry in entries {
                    rows.append(BucketRow(key: key, start: entry.start, end: entry.end, count: entry.count))
                }
            }
            return rows
        }
    }

    /// Diagnostic counts per group, kind and crash group, from `rollup_diagnostics*`.
    func diagnostics(_ scope: Scope) throws -> [DiagnosticRow] {
        if scope.usesAppStates { return try stateDiagnostics(scope) }
        return try aggregate(scope) { (query, connection) throws(StoreError) -> [DiagnosticRow] in
            let sql = query.sql(table: "diagnostics", keys: ["kind", "crash_group"], sums: ["sum(count)"])
            let first = query.firstValueColumn
            return try connection.query(sql, query.bindings) { (row) throws(StoreError) -> DiagnosticRow? in
                guard let kind = DiagnosticKind(rawValue: row.text(first)) else { return nil }
                return DiagnosticRow(
                    key: try query.key(row, names: names, on: connection), kind: kind, crashGroup: row.int64(first + 1),
                    count: row.int64(first + 2))
            }.compactMap { $0 }
        }
    }

    /// The app's own binaries seen in its diagnostics without usable debug symbols (none, or a
    /// slice marked unusable), most frequent first.
    func missingSymbols(app: String, limit: Int) throws -> [MissingSymbols] {
        let rows = try connection.query(
            """
            SELECT upper(f.binary_uuid), max(f.binary_name), count(DISTINCT f.diagnostic) AS n
            FROM diagnostic_frames f
            JOIN diagnostics d ON d.id = f.diagnostic JOIN payloads p ON p.id = d.payload
            WHERE p.app = (SELECT id FROM apps WHERE bundle_id = ?1) AND f.binary_uuid IS NOT NULL
                AND upper(f.binary_uuid) NOT IN (SELECT uuid FROM debug_symbols WHERE unusable_reason IS NULL)
            GROUP BY upper(f.binary_uuid) ORDER BY n DESC, 1 LIMIT ?2
            """, [.text(app), .integer(Int64(limit) * 4)]
        ) { MissingSymbols(uuid: $0.text(0), binaryName: $0.optionalText(1), diagnostics: $0.int64(2)) }
        return MissingSymbols.appBinaries(rows, limit: limit)
    }

    /// The crash groups `ids` of `app`, each with its most recent diagnostic as the sample.
    func crashGroups(app: String, ids: [Int64]) throws -> [CrashGroupInfo] {
        guard !ids.isEmpty else { return [] }
        let groups = try connection.query(
            """
            SELECT g.id, g.fingerprint, g.group_kind, g.title, g.first_seen, g.last_seen
            FROM crash_groups g JOIN apps a ON a.id = g.app
            WHERE a.bundle_id = ?1 AND g.id IN (SELECT value FROM json_each(?2))
            ORDER BY g.id
            """, [.text(app), .text("[" + Set(ids).map(String.init).joined(separator: ",") + "]")]
        ) { row in
            CrashGroupInfo(
                id: row.int64(0), fingerprint: row.text(1), groupKind: row.text(2), title: row.text(3),
                firstSeen: row.int64(4), lastSeen: row.int64(5), exceptionType: nil, signal: nil,
                terminationReason: nil, sampleFrames: [])
        }
        var infos: [CrashGroupInfo] = []
        for var info in groups {
            // The most recent diagnostic of the group is its sample.
            let sample = try connection.first(
                """
                SELECT id, exception_type, signal, termination_reason, termination_category, pid, signpost_data,
                    objc_composed_message
                FROM diagnostics WHERE crash_group = ? ORDER BY occurred_at DESC, id DESC LIMIT 1
                """, [.integer(info.id)]
            ) {
                (
                    $0.int64(0), $0.optionalInt64(1), $0.optionalInt64(2), $0.optionalText(3), $0.optionalText(4),
                    $0.optionalInt64(5), $0.optionalText(6), $0.optionalText(7)
                )
            }
            if let sample {
                info.exceptionType = sample.1
                info.signal = sample.2
                info.terminationReason = sample.3
                info.terminationCategory = sample.4
                info.pid = sample.5
                info.signpostData = sample.6
                info.exceptionMessage = sample.7
                info.sampleFrames = try connection.query(
                    """
                    SELECT binary_name, binary_uuid, address, offset FROM diagnostic_frames
                    WHERE diagnostic = ? ORDER BY position
                    """, [.integer(sample.0)]
                ) { row in
                    SampleFrame(
                        binaryName: row.optionalText(0), binaryUUID: row.optionalText(1),
                        address: UInt64(bitPattern: row.int64(2)), offset: UInt64(bitPattern: row.int64(3)))
                }
                if let symbols {
                    info.sampleFrames = try symbols.symbolicate(info.sampleFrames, on: connection)
                    info.title = Symbolication.title(info.title, frames: info.sampleFrames)
                }
            }
            infos.append(info)
        }
        return infos
    }

    /// Reads the packed cells selected by `sql` (group ids first, then the blob) and sums them per
    /// group: groups in ascending id order, each group's entries in key order.
    func packedSums<Entry: PackedEntry>(
        _ sql: String, _ bindings: [SQLValue], groupCount blobColumn: Int32, _: Entry.Type, on connection: Connection
    ) throws(StoreError) -> [(group: [Int64], entries: [Entry])] {
        let statement = try connection.cached(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        var sums: [[Int64]: [Entry]] = [:]
        while try statement.step() {
            let group = (0..<blobColumn).map { statement.int64($0) }
            let entries: [Entry] = statement.withBlob(blobColumn) { RollupBlob.decode($0) }
            let before = sums[group]?.count ?? 0
            let merged = RollupBlob.merge(sums[group] ?? [], entries)
            // What the read holds grows by the new (group, entry) pairs: counted, not the cells.
            try connection.count(merged.count - before)
            sums[group] = merged
        }
        return sums.map { (group: $0.key, entries: $0.value) }.sorted { $0.group.lexicographicallyPrecedes($1.group) }
    }

    /// Runs `body` with the scope translated for the rollups (inside the reader's transaction);
    /// no rows when the scope matches nothing.
    private func aggregate<R: RangeReplaceableCollection & Sendable>(
        _ scope: Scope, _ body: (RollupQuery, Connection) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        guard let query = try RollupQuery.make(scope, on: connection) else { return R() }
        return try body(query, connection)
    }
}
