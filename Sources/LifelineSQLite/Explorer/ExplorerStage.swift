import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Folds each metric document's explorer observations (``ExplorerExtractor``) into the explorer's
/// cells, packed per cell and category (migration 0016): `rollup_explorer`, rows of a device-day
/// cell (app, day, version, OS, device, app state) and category, and `rollup_explorer_by_version`,
/// rows of a version-level cell (app, day, version, app state) and category. Each row holds its
/// category's metrics in one ``ExplorerCellMap``: ~7 rows a document per level, and a query reads
/// only the rows of the categories it asks for.
///
/// Like ``RollupStage``: a document's cells are kept or dropped with its savepoint and the batch's
/// rows of equal key are merged in memory. Just before COMMIT each key's batch delta is
/// **appended** as a row of its own, not merged into the stored row: merging meant decoding and
/// re-encoding the key's whole stored state (kilobytes for a busy version-day) at every batch that
/// touched it, ~88 % of the fold's explorer cost on the reference load. A key holds at most
/// ``compactAt`` rows: the batch that would add one more merges the key's rows and its delta into
/// one (same transaction as the watermark, so a crash keeps either all or none of it). Queries merge
/// a key's rows as they merge a group's.
final class ExplorerStage: ItemWriteStage {
    /// The most rows a key holds: a query reads at most this many per key; the fold decodes and
    /// re-encodes a key's whole state once every `compactAt - 1` batches that touch it.
    static let compactAt = 8
    /// The most keys whose row count is remembered (``rowCounts``); past it they are forgotten.
    static let trackedKeys = 100_000

    /// A packed row's key. The version level has no OS and device (both 0 in its keys).
    private struct RowKey: Hashable {
        var app: Int64
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64
        var appState: String
        var category: Substring

        /// The same cell at the version level.
        var byVersion: RowKey {
            var key = self
            key.os = 0
            key.device = 0
            return key
        }

        /// The key's parameters at `level` (``RollupLevel/insertExplorer``).
        func bindings(_ level: RollupLevel) -> [SQLValue] {
            let dimensions: [Int64] = level == .fine ? [version, os, device] : [version]
            return [.integer(app), .integer(day)] + dimensions.map { .integer($0) } + [
                .text(appState), .text(String(category)),
            ]
        }
    }

    /// The statements of one level.
    private struct Statements {
        var insert: String
        var select: String
        var delete: String

        init(_ level: RollupLevel) {
            (insert, select, delete) = (level.insertExplorer, level.selectExplorerRows, level.deleteExplorerRows)
        }
    }

    private static let fineStatements = Statements(.fine)
    private static let byVersionStatements = Statements(.byVersion)

    /// The batch's rows, per level.
    private var fine: [RowKey: ExplorerCellMap] = [:]
    private var byVersion: [RowKey: ExplorerCellMap] = [:]
    /// The current document's rows (fine keys), until its savepoint is released: a handful (a
    /// category per app state), found by a linear search.
    private var pending: [(key: RowKey, cells: ExplorerCellMap)] = []
    /// How many rows each recently written key holds, as this stage wrote them. A heuristic, never
    /// a source of figures: after a restart, a forgotten key or a batch rolled back it is off, and a
    /// key holds a few rows more (or is merged a little early) until its next compaction, which
    /// reads every row the key has.
    /// Keyed by the hash of level and key: a collision only merges a key early or late.
    private var rowCounts: [Int: Int] = [:]

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .metric(let metric) = stored.item.document.content else { return }
        let extraction = ExplorerExtractor.extract(metric)
        guard extraction.isDeviceDay, !extraction.observations.isEmpty else { return }
        let meta = metric.meta
        let day = Int64(RollupDeltas.day(epochSeconds: stored.occurredAt))
        let version = try session.id(.appVersion, meta.appVersion) ?? 0
        let os = try session.id(.osVersion, meta.osVersion) ?? 0
        let device = try session.id(.deviceType, meta.deviceType) ?? 0
        for observation in extraction.observations {
            let category = ExplorerCatalog.categoryKey(ofMetric: observation.metric)
            let index =
                pending.firstIndex { $0.key.category == category && $0.key.appState == observation.appState }
                ?? {
                    let key = RowKey(
                        app: stored.appID, day: day, version: version, os: os, device: device,
                        appState: observation.appState, category: category)
                    pending.append((key, ExplorerCellMap()))
                    return pending.count - 1
                }()
            let entry = ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject)
            pending[index].cells.cells[entry, default: ExplorerCell()].add(observation.sample)
        }
    }

    func requestReleased() {
        for (key, cells) in pending {
            Self.add(cells, at: key.byVersion, to: &byVersion)
            Self.add(cells, at: key, to: &fine)
        }
        pending.removeAll(keepingCapacity: true)
    }

    private static func add(_ cells: ExplorerCellMap, at key: RowKey, to rows: inout [RowKey: ExplorerCellMap]) {
        if let index = rows.index(forKey: key) {
            rows.values[index].merge(cells)
        } else {
            rows[key] = cells
        }
    }

    func requestRolledBack() { pending.removeAll(keepingCapacity: true) }

    func batchAborted() {
        pending.removeAll()
        fine = [:]
        byVersion = [:]
    }

    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { batchAborted() }
        if rowCounts.count > Self.trackedKeys { rowCounts = [:] }
        for (level, rows) in [(RollupLevel.fine, fine), (.byVersion, byVersion)] {
            for (key, cells) in rows {
                try append(cells, at: key, level: level, on: connection)
            }
        }
    }

    /// Appends `cells` as a row of `key`, or merges the key's rows and `cells` into one row when it
    /// holds ``compactAt`` rows with this one.
    private func append(
        _ cells: ExplorerCellMap, at key: RowKey, level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        var hasher = Hasher()
        hasher.combine(level == .fine)
        hasher.combine(key)
        let tracked = hasher.finalize()
        let statements = level == .fine ? Self.fineStatements : Self.byVersionStatements
        let bindings = key.bindings(level)
        let held = rowCounts[tracked, default: 0]
        guard held + 1 >= Self.compactAt else {
            try connection.run(statements.insert, bindings + [.blob(cells.encoded())])
            rowCounts[tracked] = held + 1
            return
        }
        var merged = cells
        for blob in try connection.query(statements.select, bindings, { $0.blob(0) }) {
            // A stored row that does not decode (only a damaged file holds one) is dropped rather
            // than stopping the fold for good; `lifeline refold` rebuilds the key.
            if let stored = try? ExplorerCellMap(decoding: blob) { merged.merge(stored) }
        }
        try connection.run(statements.delete, bindings)
        try connection.run(statements.insert, bindings + [.blob(merged.encoded())])
        rowCounts[tracked] = 1
    }
}
