import CSQLite
import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Folds each metric document's explorer observations (``ExplorerExtractor``) into the explorer's
/// cells: `rollup_explorer` (migration 0015), one row per device-day cell (app, day, version, OS,
/// device, app state) holding every metric in one ``ExplorerCellMap``, and
/// `rollup_explorer_by_version` (migration 0014), one row per version-level cell and metric.
///
/// Like ``RollupStage``: a document's cells are kept or dropped with its savepoint, the batch's
/// cells of equal key are merged in memory, and each is upserted once just before COMMIT, merged
/// into the stored one by `ll_merge_explorer_map` (fine) or `ll_merge_explorer` (by version).
final class ExplorerStage: ItemWriteStage {
    /// A device-day cell of the fine level.
    private struct CellKey: Hashable {
        var app: Int64
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64
        var appState: String
    }

    /// One metric's cell of the version level.
    private struct VersionKey: Hashable {
        var app: Int64
        var day: Int64
        var version: Int64
        var metric: String
        var subject: String
        var appState: String
    }

    /// The batch's fine cells, each with its metrics.
    private var fine: [CellKey: [ExplorerCellMap.Key: ExplorerCell]] = [:]
    /// The batch's version-level cells.
    private var byVersion: [VersionKey: ExplorerCell] = [:]
    /// The current document's observations, until its savepoint is released.
    private var pending: [(CellKey, ExplorerObservation)] = []

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
            let key = CellKey(
                app: stored.appID, day: day, version: version, os: os, device: device,
                appState: observation.appState)
            pending.append((key, observation))
        }
    }

    func requestReleased() {
        for (key, observation) in pending {
            let metric = ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject)
            fine[key, default: [:]][metric, default: ExplorerCell()].add(observation.sample)
            let coarse = VersionKey(
                app: key.app, day: key.day, version: key.version, metric: observation.metric,
                subject: observation.subject, appState: key.appState)
            byVersion[coarse, default: ExplorerCell()].add(observation.sample)
        }
        pending.removeAll(keepingCapacity: true)
    }

    func requestRolledBack() { pending.removeAll(keepingCapacity: true) }

    func batchAborted() {
        pending.removeAll()
        fine = [:]
        byVersion = [:]
    }

    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { batchAborted() }
        for (key, cells) in fine {
            try connection.run(
                RollupLevel.upsertExplorerMap,
                [
                    .integer(key.app), .integer(key.day), .integer(key.version), .integer(key.os),
                    .integer(key.device), .text(key.appState), .blob(ExplorerCellMap(cells).encoded()),
                ])
        }
        let sql = RollupLevel.byVersion.upsertExplorer
        for (key, cell) in byVersion {
            try connection.run(
                sql,
                [
                    .integer(key.app), .integer(key.day), .integer(key.version), .text(key.metric),
                    .text(key.subject), .text(key.appState), .blob(cell.encoded()),
                ])
        }
    }
}

/// `ll_merge_explorer(stored, incoming)`: the merge of two encoded ``ExplorerCell``s.
enum ExplorerMergeFunction {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Registers the function on a connection.
    static func register(on handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle, "ll_merge_explorer", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, _, arguments in ExplorerMergeFunction.merge(context, arguments) }, nil, nil, nil)
    }

    /// Registers `ll_merge_explorer_map(stored, incoming)`: the merge of two encoded
    /// ``ExplorerCellMap``s, with the same rules for what does not decode.
    static func registerMap(on handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle, "ll_merge_explorer_map", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, _, arguments in ExplorerMergeFunction.mergeMaps(context, arguments) }, nil, nil, nil)
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

    private static func mergeMaps(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let arguments else { return sqlite3_result_null(context) }
        guard let incoming = try? ExplorerCellMap(decoding: bytes(arguments[1])) else {
            return sqlite3_result_error(context, "ll_merge_explorer_map: undecodable incoming cells", -1)
        }
        var stored = (try? ExplorerCellMap(decoding: bytes(arguments[0]))) ?? ExplorerCellMap()
        stored.merge(incoming)
        result(context, stored.encoded())
    }

    /// A stored cell that does not decode (only a damaged file holds one) is replaced by the
    /// incoming cell rather than stopping the fold for good; `lifeline refold` rebuilds it. An
    /// incoming cell that does not decode is an error (the fold wrote it: a bug).
    private static func merge(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let arguments else { return sqlite3_result_null(context) }
        guard let incoming = try? ExplorerCell(decoding: bytes(arguments[1])) else {
            return sqlite3_result_error(context, "ll_merge_explorer: undecodable incoming cell", -1)
        }
        var stored = (try? ExplorerCell(decoding: bytes(arguments[0]))) ?? ExplorerCell()
        stored.merge(incoming)
        result(context, stored.encoded())
    }
}
