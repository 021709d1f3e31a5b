import LifelineModel
import LifelineStorage

/// Sums a ``RollupDeltas`` log per rollup cell and adds it to the rollup tables of both levels,
/// on cached prepared statements, inside the caller's transaction:
///
/// - one upsert per metric cell: payloads and app time added, exit counts and signpost totals
///   packed (``RollupBlob``) and merged into the stored blobs by `ll_merge_counts`;
/// - one upsert per version cell and histogram source, merged by `ll_merge_buckets`;
/// - one upsert per (cell, kind, crash group) of diagnostics, `count = count + excluded.count`.
enum RollupFlusher {
    /// A metric cell's increments.
    private struct MetricCell {
        var payloads: Int64 = 0
        var foreground: Double = 0
        var background: Double = 0
        var exits: [CountEntry] = []
        var signposts: [CountEntry] = []
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

    /// Adds `deltas` to the rollups of both levels. `fineBuckets`: whether the fine level's bucket
    /// table exists (migration 0012; a database upgraded from before it is rebuilt at 0004 without).
    static func flush(_ deltas: RollupDeltas, on connection: Connection, fineBuckets: Bool = true) throws(StoreError) {
        guard !deltas.isEmpty else { return }
        for level in RollupLevel.allCases {
            let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
            try flushMetrics(deltas, level: level, project: project, on: connection)
            if level == .byVersion || fineBuckets {
                try flushBuckets(deltas.buckets, level: level, project: project, on: connection)
            }
            try flushDiagnostics(deltas.diagnostics, level: level, project: project, on: connection)
        }
    }

    private static func flushMetrics(
        _ deltas: RollupDeltas, level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        var cells: [RollupDeltas.Cell: MetricCell] = [:]
        for usage in deltas.usage {
            let cell = project(usage.cell)
            cells[cell, default: MetricCell()].payloads.addSaturating(usage.payloads)
            cells[cell, default: MetricCell()].foreground += usage.foregroundMilliseconds
            cells[cell, default: MetricCell()].background += usage.backgroundMilliseconds
        }
        for exit in deltas.exits {
            cells[project(exit.cell), default: MetricCell()].exits.append(
                CountEntry(a: exit.state, b: exit.reason, count: exit.count))
        }
        for signpost in deltas.signposts {
            cells[project(signpost.cell), default: MetricCell()].signposts.append(
                CountEntry(a: signpost.category, b: signpost.name, count: signpost.count))
        }
        guard !cells.isEmpty else { return }
        let statement = try connection.cached(level.upsertMetrics)
        for (cell, sums) in cells {
            let next = try bind(cell, level: level, to: statement)
            try statement.bind(int: sums.payloads, at: next)
            try statement.bind(double: sums.foreground, at: next + 1)
            try statement.bind(double: sums.background, at: next + 2)
            try statement.bind(.blob(RollupBlob.encode(RollupBlob.normalize(sums.exits))), at: next + 3)
            try statement.bind(.blob(RollupBlob.encode(RollupBlob.normalize(sums.signposts))), at: next + 4)
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
