import LifelineModel
import LifelineStorage

/// Sums a ``RollupDeltas`` log per rollup cell (``RollupCells``) and adds it to the rollup tables
/// of both levels, on cached prepared statements, inside the caller's transaction:
///
/// - one upsert per metric cell: payloads and app time added, exit counts and signpost totals
///   packed (``RollupBlob``) and merged into the stored blobs by `ll_merge_counts`;
/// - one upsert per version cell and histogram source, merged by `ll_merge_buckets`, and one per
///   fine cell with all its sources (``BucketCell``), merged by `ll_merge_bucket_cells`;
/// - one upsert per (cell, kind, crash group) of diagnostics, `count = count + excluded.count`.
///
/// The upserts go in the tables' key order: a write of the cells held over a few seconds touches
/// thousands of rows, and in key order each is found on or beside the page the one before it
/// ended on.
enum RollupFlusher {
    /// Where the fine level's histogram buckets go, by the migrations a database has reached.
    enum FineBuckets {
        /// Nowhere: no fine bucket table yet (the rebuild at migration 0004).
        case absent
        /// One row per cell and source in `rollup_buckets` (the rebuild at migration 0012).
        case perSource
        /// One row per cell in `rollup_bucket_cells` (migration 0021 on).
        case perCell
    }

    /// Adds `deltas` to the rollups of both levels.
    static func flush(
        _ deltas: RollupDeltas, on connection: Connection, fineBuckets: FineBuckets = .perCell
    ) throws(StoreError) {
        guard !deltas.isEmpty else { return }
        for level in RollupLevel.allCases {
            let cells =
                level == .fine && fineBuckets == .perCell
                ? RollupCells.finePacked(deltas) : RollupCells(deltas, level: level)
            try write(cells, level: level, on: connection, fineBuckets: fineBuckets)
        }
    }

    /// Adds the sums `cells` of `level` to its tables. The version level's buckets are one row per
    /// cell and source; `fineBuckets` says where the fine level's go (`perCell`: cells made by
    /// ``RollupCells/finePacked(_:)``, their buckets packed per cell already).
    static func write(
        _ cells: RollupCells, level: RollupLevel, on connection: Connection, fineBuckets: FineBuckets = .perCell
    ) throws(StoreError) {
        try writeMetrics(cells.metrics, level: level, on: connection)
        switch level == .byVersion ? .perSource : fineBuckets {
        case .absent: break
        case .perSource: try writeBuckets(cells.buckets, level: level, on: connection)
        case .perCell: try writeBucketCells(cells.bucketCells, on: connection)
        }
        try writeDiagnostics(cells.diagnostics, level: level, on: connection)
    }

    private static func writeMetrics(
        _ cells: [RollupDeltas.Cell: RollupCells.Metric], level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        guard !cells.isEmpty else { return }
        let statement = try connection.cached(level.upsertMetrics)
        for (cell, sums) in cells.sorted(by: { RollupDeltas.Cell.precedes($0.key, $1.key) }) {
            let next = try bind(cell, level: level, to: statement)
            try statement.bind(int: sums.payloads, at: next)
            try statement.bind(double: sums.foreground, at: next + 1)
            try statement.bind(double: sums.background, at: next + 2)
            try statement.bind(.blob(RollupBlob.encode(sums.exits)), at: next + 3)
            try statement.bind(.blob(RollupBlob.encode(sums.signposts)), at: next + 4)
            try statement.runToCompletion()
        }
    }

    private static func writeBuckets(
        _ cells: [RollupCells.SourceCell: [UInt8]], level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        guard !cells.isEmpty else { return }
        let statement = try connection.cached(level.upsertBuckets)
        let ordered = cells.sorted {
            RollupDeltas.Cell.precedes($0.key.cell, $1.key.cell)
                || ($0.key.cell == $1.key.cell && $0.key.source < $1.key.source)
        }
        for (key, packed) in ordered {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(int: key.source, at: next)
            try statement.bind(.blob(packed), at: next + 1)
            try statement.runToCompletion()
        }
    }

    /// The fine level's buckets, one ``BucketCell`` blob per cell (``RollupCells/finePacked(_:)``).
    private static func writeBucketCells(
        _ cells: [RollupDeltas.Cell: [UInt8]], on connection: Connection
    ) throws(StoreError) {
        guard !cells.isEmpty else { return }
        let statement = try connection.cached(RollupLevel.upsertBucketCells)
        for (cell, blob) in cells.sorted(by: { RollupDeltas.Cell.precedes($0.key, $1.key) }) {
            let next = try bind(cell, level: .fine, to: statement)
            try statement.bind(.blob(blob), at: next)
            try statement.runToCompletion()
        }
    }

    private static func writeDiagnostics(
        _ sums: [RollupCells.DiagnosticKey: Int64], level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        guard !sums.isEmpty else { return }
        let statement = try connection.cached(level.upsertDiagnostics)
        let ordered = sums.sorted {
            RollupDeltas.Cell.precedes($0.key.cell, $1.key.cell)
                || ($0.key.cell == $1.key.cell && ($0.key.kind, $0.key.crashGroup) < ($1.key.kind, $1.key.crashGroup))
        }
        for (key, count) in ordered {
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
