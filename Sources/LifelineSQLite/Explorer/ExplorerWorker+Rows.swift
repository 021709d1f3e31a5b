import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// The rows an ``ExplorerWorker`` is handed, seals and prepares, and its prepare's bounds.
extension ExplorerWorker {
    /// One released document: its fine row's dimensions (app state and category come from each
    /// observation) and its decoded payload.
    struct Document: Sendable {
        var app: Int64
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64
        var metric: MetricPayload
        /// The levels it is added to: both, except when a catch-up replays it into the rows of a
        /// level whose stored part already holds it (``ExplorerStage``, `rollup_watermarks`).
        var addsFine = true
        var addsVersion = true
    }

    /// One row ready to be written: as it is, or merged in SQL with a stored row not read
    /// (``mergesStored``).
    struct PreparedRow {
        var level: RollupLevel
        var key: ExplorerRowKey
        var cells: [UInt8]
        /// The row's stored cells were not read (``fineProbe``): the writer merges them in SQL, if
        /// there are any.
        var mergesStored = false
    }

    /// Rows sealed for a write, per level.
    struct SealedRows {
        var fine: [ExplorerRowKey: ExplorerPendingRow] = [:]
        var byVersion: [ExplorerRowKey: ExplorerPendingRow] = [:]

        var isEmpty: Bool { fine.isEmpty && byVersion.isEmpty }
    }

    /// `builder`'s write at `key` merged into its `stored` cells; `nil` when they do not read
    /// (left to the SQL merge, and its repair).
    static func row(
        _ level: RollupLevel, _ key: ExplorerRowKey, _ builder: ExplorerCellMapBuilder, merging stored: [UInt8]
    ) -> PreparedRow? {
        guard let cells = try? builder.merged(into: stored) else { return nil }
        return PreparedRow(level: level, key: key, cells: cells)
    }

    /// Sealed rows handed back to the adding thread at a time, once merged.
    static let releaseBatch = 256

    /// Fine rows a prepare reads before it decides whether reading the rest is worth it. When at
    /// most ``fineProbeFound`` of them are stored, the rest are written unread (``PreparedRow/mergesStored``):
    /// on a load where nearly every document is a fine cell of its own (the reference load), each
    /// read found nothing, and the writer's insert looks the key up anyway; the few stored rows
    /// among them are merged in SQL (`ll_merge_explorer_map`, the same merge). A fleet's fine cells
    /// are mostly stored: every row is read and merged here, off the writer.
    static let defaultFineProbe = 64
    static let fineProbeFound = 2
}
