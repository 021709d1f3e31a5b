/// Sums a ``RollupDeltas`` log per rollup cell and adds it to the rollup tables of both levels
/// with one upsert per cell and kind, on cached prepared statements: exit counts, signpost totals
/// and buckets as packed blobs merged into the stored ones by `ll_merge_counts` /
/// `ll_merge_buckets` (``RollupBlob``); usage and diagnostics with
/// `ON CONFLICT … DO UPDATE SET count = count + excluded.count`. Runs inside the caller's transaction.
enum RollupFlusher {
    private struct Usage {
        var payloads: Int64 = 0
        var foreground: Double = 0
        var background: Double = 0
    }

    private struct SourceCell: Hashable {
        var cell: RollupDeltas.Cell
        var source: Int64
    }

    private struct DiagnosticKey: Hashable {
        var cell: RollupDeltas.Cell
        var kind: String
        var crashGroup: Int64
    }

    /// Adds `deltas` to the rollups of both levels.
    static func flush(_ deltas: RollupDeltas, on connection: Connection) throws(StoreError) {
        guard !deltas.isEmpty else { return }
        for level in RollupLevel.allCases {
            let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
            try flushUsage(deltas.usage, level: level, project: project, on: connection)
            var exits: [RollupDeltas.Cell: [CountEntry]] = [:]
            for exit in deltas.exits {
                exits[project(exit.cell), default: []].append(
                    CountEntry(a: exit.state, b: exit.reason, count: exit.count))
            }
            try upsertCounts(exits, sql: level.upsertExits, level: level, on: connection)
            var signposts: [RollupDeltas.Cell: [CountEntry]] = [:]
            for signpost in deltas.signposts {
                signposts[project(signpost.cell), default: []].append(
                    CountEntry(a: signpost.category, b: signpost.name, count: signpost.count))
            }
            try upsertCounts(signposts, sql: level.upsertSignposts, level: level, on: connection)
            if level.hasBuckets { try flushBuckets(deltas.buckets, level: level, project: project, on: connection) }
            try flushDiagnostics(deltas.diagnostics, level: level, project: project, on: connection)
        }
    }

    private static func flushUsage(
        _ rows: [RollupDeltas.Usage], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var sums: [RollupDeltas.Cell: Usage] = [:]
        for row in rows {
            sums[project(row.cell), default: Usage()].payloads += 1
            sums[project(row.cell), default: Usage()].foreground += row.foregroundMilliseconds
            sums[project(row.cell), default: Usage()].background += row.backgroundMilliseconds
        }
        let statement = try connection.cached(level.upsertUsage)
        for (cell, usage) in sums {
            let next = try bind(cell, level: level, to: statement)
            try statement.bind(int: usage.payloads, at: next)
            try statement.bind(double: usage.foreground, at: next + 1)
            try statement.bind(double: usage.background, at: next + 2)
            try statement.runToCompletion()
        }
    }

    /// One upsert per cell: its entries summed per key, packed, merged into the stored blob.
    private static func upsertCounts(
        _ cells: [RollupDeltas.Cell: [CountEntry]], sql: String, level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        guard !cells.isEmpty else { return }
        let statement = try connection.cached(sql)
        for (cell, entries) in cells {
            let next = try bind(cell, level: level, to: statement)
            try statement.bind(.blob(RollupBlob.encode(RollupBlob.normalize(entries))), at: next)
            try statement.runToCompletion()
        }
    }

    private static func flushBuckets(
        _ rows: [RollupDeltas.Bucket], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var cells: [SourceCell: [BucketEntry]] = [:]
        for row in rows {
            cells[SourceCell(cell: project(row.cell), source: row.source), default: []].append(
                BucketEntry(start: row.start, end: row.end, count: row.count))
        }
        let statement = try connection.cached(level.upsertBuckets)
        for (key, entries) in cells {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(int: key.source, at: next)
            let packed = RollupBlob.coarsen(RollupBlob.normalize(entries))
            try statement.bind(.blob(RollupBlob.encode(packed)), at: next + 1)
            try statement.runToCompletion()
        }
    }

    private static func flushDiagnostics(
        _ rows: [RollupDeltas.Diagnostic], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var sums: [DiagnosticKey: Int64] = [:]
        for row in rows {
            sums[DiagnosticKey(cell: project(row.cell), kind: row.kind, crashGroup: row.crashGroup), default: 0] += 1
        }
        let statement = try connection.cached(level.upsertDiagnostics)
        for (key, count) in sums {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(.text(key.kind), at: next)
            try statement.bind(int: key.crashGroup, at: next + 1)
            try statement.bind(int: count, at: next + 2)
            try statement.runToCompletion()
        }
    }

    /// Binds the key columns of `cell` at `level`; returns the next parameter index.
    private static func bind(
        _ cell: RollupDeltas.Cell, level: RollupLevel, to statement: Statement
    ) throws(StoreError) -> Int32 {
        try statement.bind(int: cell.app, at: 1)
        try statement.bind(int: cell.day, at: 2)
        try statement.bind(int: cell.version, at: 3)
        guard level == .fine else { return 4 }
        try statement.bind(int: cell.os, at: 4)
        try statement.bind(int: cell.device, at: 5)
        return 6
    }
}
