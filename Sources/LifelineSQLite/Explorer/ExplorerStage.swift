import CSQLite
import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Folds each metric document's explorer observations (``ExplorerExtractor``) into the explorer's
/// cells (`rollup_explorer`, `rollup_explorer_by_version`, migration 0014).
///
/// Like ``RollupStage``: a document's cells are kept or dropped with its savepoint, the batch's
/// cells of equal key are merged in memory, and each is upserted once just before COMMIT, merged
/// into the stored cell by `ll_merge_explorer`.
final class ExplorerStage: ItemWriteStage {
    /// The key of one cell of one level (`os` and `device` are 0 at the version level).
    private struct Key: Hashable {
        var app: Int64
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64
        var metric: String
        var subject: String
        var appState: String
    }

    /// The batch's cells per level (fine, by version).
    private var batch: [[Key: ExplorerCell]] = [[:], [:]]
    /// The current document's observations, until its savepoint is released.
    private var pending: [(Key, ExplorerSample)] = []

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
            pending.append(
                (
                    Key(
                        app: stored.appID, day: day, version: version, os: os, device: device,
                        metric: observation.metric, subject: observation.subject, appState: observation.appState),
                    observation.sample
                ))
        }
    }

    func requestReleased() {
        for (key, sample) in pending {
            batch[0][key, default: ExplorerCell()].add(sample)
            var coarse = key
            coarse.os = 0
            coarse.device = 0
            batch[1][coarse, default: ExplorerCell()].add(sample)
        }
        pending.removeAll(keepingCapacity: true)
    }

    func requestRolledBack() { pending.removeAll(keepingCapacity: true) }

    func batchAborted() {
        pending.removeAll()
        batch = [[:], [:]]
    }

    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { batchAborted() }
        for (level, cells) in zip([RollupLevel.fine, .byVersion], batch) where !cells.isEmpty {
            let sql = level.upsertExplorer
            for (key, cell) in cells {
                var values: [SQLValue] = [.integer(key.app), .integer(key.day), .integer(key.version)]
                if level == .fine { values += [.integer(key.os), .integer(key.device)] }
                values += [.text(key.metric), .text(key.subject), .text(key.appState), .blob(cell.encoded())]
                try connection.run(sql, values)
            }
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

    /// A stored cell that does not decode (only a damaged file holds one) is replaced by the
    /// incoming cell rather than stopping the fold for good; `lifeline refold` rebuilds it. An
    /// incoming cell that does not decode is an error (the fold wrote it: a bug).
    private static func merge(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let arguments else { return sqlite3_result_null(context) }
        func bytes(_ value: OpaquePointer?) -> UnsafeRawBufferPointer {
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let pointer = sqlite3_value_blob(value) else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: pointer, count: count)
        }
        guard let incoming = try? ExplorerCell(decoding: bytes(arguments[1])) else {
            return sqlite3_result_error(context, "ll_merge_explorer: undecodable incoming cell", -1)
        }
        var stored = (try? ExplorerCell(decoding: bytes(arguments[0]))) ?? ExplorerCell()
        stored.merge(incoming)
        let encoded = stored.encoded()
        encoded.withUnsafeBytes { raw in
            sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
        }
    }
}
