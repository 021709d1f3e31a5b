import CSQLite
import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Folds each metric document's explorer observations (``ExplorerExtractor``) into the explorer's
/// cells, packed per cell and category (migration 0016): `rollup_explorer`, one row per device-day
/// cell (app, day, version, OS, device, app state) and category, and `rollup_explorer_by_version`,
/// one row per version-level cell (app, day, version, app state) and category. Each row holds its
/// category's metrics in one ``ExplorerCellMap``: ~7 rows a document per level, and a query reads
/// only the rows of the categories it asks for.
///
/// Like ``RollupStage``: a document's cells are kept or dropped with its savepoint, the batch's
/// rows of equal key are merged in memory, and each is upserted once just before COMMIT, merged
/// into the stored one by `ll_merge_explorer_map`.
final class ExplorerStage: ItemWriteStage {
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

        /// The upsert's key parameters at `level` (``RollupLevel/upsertExplorer``).
        func bindings(_ level: RollupLevel) -> [SQLValue] {
            let dimensions: [Int64] = level == .fine ? [version, os, device] : [version]
            return [.integer(app), .integer(day)] + dimensions.map { .integer($0) } + [
                .text(appState), .text(String(category)),
            ]
        }
    }

    /// The batch's rows, per level.
    private var fine: [RowKey: ExplorerCellMap] = [:]
    private var byVersion: [RowKey: ExplorerCellMap] = [:]
    /// The current document's rows (fine keys), until its savepoint is released: a handful (a
    /// category per app state), found by a linear search.
    private var pending: [(key: RowKey, cells: ExplorerCellMap)] = []
    /// The upserts, made once.
    private static let upserts = (
        fine: RollupLevel.fine.upsertExplorer, byVersion: RollupLevel.byVersion.upsertExplorer
    )

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
        for (level, rows) in [(RollupLevel.fine, fine), (.byVersion, byVersion)] {
            let sql = level == .fine ? Self.upserts.fine : Self.upserts.byVersion
            for (key, cells) in rows {
                try connection.run(sql, key.bindings(level) + [.blob(cells.encoded())])
            }
        }
    }
}

/// `ll_merge_explorer_map(stored, incoming)`: the merge of two encoded ``ExplorerCellMap``s.
enum ExplorerMergeFunction {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Registers the function on a connection.
    static func register(on handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle, "ll_merge_explorer_map", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, _, arguments in ExplorerMergeFunction.merge(context, arguments) }, nil, nil, nil)
    }

    private static func bytes(_ value: OpaquePointer?) -> UnsafeRawBufferPointer {
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, let pointer = sqlite3_value_blob(value) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    private static func result(_ context: OpaquePointer?, _ encoded: [UInt8]) {
        encoded.withUnsafeBytes { raw in
            sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
        }
    }

    /// Merges as bytes (``ExplorerCellMap/merging(encoded:with:)``: only the cells both rows hold
    /// are decoded). A stored row that does not read (only a damaged file holds one) is replaced by
    /// the incoming cells rather than stopping the fold for good; `lifeline refold` rebuilds it.
    /// Incoming cells that do not decode are an error (the fold wrote them: a bug).
    private static func merge(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let arguments else { return sqlite3_result_null(context) }
        let stored = bytes(arguments[0])
        let incoming = bytes(arguments[1])
        if let merged = try? ExplorerCellMap.merging(encoded: stored, with: incoming) {
            return result(context, merged)
        }
        guard let cells = try? ExplorerCellMap(decoding: incoming) else {
            return sqlite3_result_error(context, "ll_merge_explorer_map: undecodable incoming cells", -1)
        }
        result(context, cells.encoded())
    }
}
