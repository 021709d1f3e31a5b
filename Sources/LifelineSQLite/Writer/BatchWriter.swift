import LifelineIngest
import LifelineModel
import LifelineStorage

/// Writes batches of ``IngestRequest``s on one connection: one transaction per batch, one
/// savepoint per request. Used by the ``IngestWriter``'s thread only.
///
/// This is the door: per new document it writes the payload's index row and its raw copy (and
/// the request's idempotency record), nothing else: not even an index entry (``PayloadKeys``
/// finds duplicates and fills the lookup tables in bulk). What was written is kept in memory for
/// the aggregator (``fold(limit:)``), which folds it into the rollups in later transactions.
final class BatchWriter {
    /// The result of one batch.
    struct BatchResult {
        /// One result per request, in order; all failures when the batch did not commit.
        var results: [Result<IngestOutcome, StoreError>]
        /// Whether the transaction committed.
        var committed: Bool
        /// The new documents it stored (empty when it did not commit), in id order.
        var stored: [StoredItem] = []
    }

    static let insertPayload = """
        INSERT INTO payloads (app, kind, app_version, build, os_version, device_type, region, arch, day,
            begin_at, end_at, begin_raw, end_raw, received_at_ms, content_hash, unparsed_measurements,
            dropped_values, format, device_day)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let insertRaw = "INSERT INTO payload_raw (payload, raw) VALUES (?, ?)"
    static let findIdempotency = "SELECT payload_ids FROM idempotency_keys WHERE app = ? AND key = ?"
    static let insertIdempotency = """
        INSERT INTO idempotency_keys (app, key, accepted, duplicates, payload_ids, created_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """

    let connection: Connection
    let interner = Interner()
    /// The raw copies' preset dictionaries, for the documents the fold reads again.
    let rawDictionaries = RawDictionaryCache()
    /// Stages run in the door's transaction (none by default: the door only appends).
    private let stages: [any ItemWriteStage]
    /// Stages the aggregator runs for every folded document.
    let foldStages: [any ItemWriteStage]
    /// The explorer stage among them (it holds rows across folds).
    let explorer: ExplorerStage?
    /// The rollup stage among them (it keeps version cells across folds).
    let rollups: RollupStage?
    /// Documents committed and not folded yet, by payload id: the fold's fast path (it re-reads
    /// the raw documents of the others). At most ``maxRetained``.
    var unfolded: [Int64: StoredItem] = [:]
    /// Most documents kept in memory for the fold.
    let maxRetained: Int
    /// The stored contents above the lookup tables' watermark (read at the first batch).
    var keys = PayloadKeys()
    private var keysLoaded = false
    /// New documents of the current request and of the current batch.
    private var requestStored: [StoredItem] = []
    private var batchStored: [StoredItem] = []

    init(
        connection: Connection, stages: [any ItemWriteStage] = [],
        foldStages: [any ItemWriteStage] = DefaultStages.make(), maxRetained: Int = 16_384
    ) {
        self.connection = connection
        self.stages = stages
        self.foldStages = foldStages
        self.explorer = foldStages.lazy.compactMap { $0 as? ExplorerStage }.first
        self.rollups = foldStages.lazy.compactMap { $0 as? RollupStage }.first
        self.maxRetained = maxRetained
    }

    /// Closes the connection (on the writer thread, when it stops).
    func close() {
        connection.close()
    }

    /// Writes `requests` in one transaction. A request that fails (other than by an unavailable
    /// storage) is rolled back alone.
    ///
    /// Failures stay with the request that caused them: when a request breaks the transaction
    /// itself (an internal error, or SQLite dropped the transaction), or the flush before COMMIT
    /// or the COMMIT fails for a reason other than unavailable storage, the batch is rolled back
    /// and written again one request per transaction, so only the poisoned request fails and
    /// every other one still commits. When the storage itself is unavailable (disk full, I/O
    /// error), nothing is kept and every request gets ``StoreError/Code/unavailable``.
    func write(_ requests: [IngestRequest]) -> BatchResult {
        let first = writeOnce(requests)
        guard !first.committed, requests.count > 1, first.storageUnavailable == false else {
            return BatchResult(results: first.results, committed: first.committed, stored: first.stored)
        }
        var results: [Result<IngestOutcome, StoreError>] = []
        results.reserveCapacity(requests.count)
        var committed = false
        var stored: [StoredItem] = []
        for request in requests {
            let alone = writeOnce([request])
            committed = committed || alone.committed
            stored += alone.stored
            results.append(alone.results.first ?? .failure(StoreError(.internal, "internal storage error")))
        }
        return BatchResult(results: results, committed: committed, stored: stored)
    }

    /// One attempt: the batch in one transaction.
    private func writeOnce(_ requests: [IngestRequest]) -> (
        results: [Result<IngestOutcome, StoreError>], committed: Bool, storageUnavailable: Bool, stored: [StoredItem]
    ) {
        batchStored.removeAll(keepingCapacity: true)
        do throws(StoreError) {
            // Acknowledged only once durable: this commit is synced (a fold before it may not be).
            try connection.syncCommits(true)
            try connection.execute("BEGIN IMMEDIATE")
            // Payloads another process appended meanwhile are looked up too.
            if keysLoaded {
                try keys.catchUp(on: connection)
            } else {
                try keys.load(on: connection)
                keysLoaded = true
            }
        } catch {
            return abort(requests.count, error, storage: true)
        }
        let session = WriteSession(connection: connection, interner: interner)
        var results: [Result<IngestOutcome, StoreError>] = []
        results.reserveCapacity(requests.count)
        for request in requests {
            do throws(StoreError) {
                try connection.run("SAVEPOINT request")
                let outcome = try write(request, in: session)
                try connection.run("RELEASE request")
                interner.releaseSavepoint()
                for stage in stages { stage.requestReleased() }
                batchStored += requestStored
                requestStored.removeAll(keepingCapacity: true)
                results.append(.success(outcome))
            } catch {
                if error.code == .unavailable || error.code == .internal || !connection.inTransaction {
                    return abort(requests.count, error, storage: error.code == .unavailable)
                }
                do throws(StoreError) {
                    try connection.run("ROLLBACK TO request")
                    try connection.run("RELEASE request")
                } catch let rollbackError {
                    return abort(requests.count, rollbackError, storage: rollbackError.code == .unavailable)
                }
                interner.rollbackSavepoint()
                for stage in stages { stage.requestRolledBack() }
                keys.rolledBack(requestStored.map { ($0.payloadID, $0.appID, $0.item.contentHash) })
                requestStored.removeAll(keepingCapacity: true)
                results.append(.failure(error))
            }
        }
        do throws(StoreError) {
            for stage in stages { try stage.beforeCommit(on: connection) }
            try connection.execute("COMMIT")
        } catch {
            return abort(requests.count, error, storage: error.code == .unavailable)
        }
        interner.commit()
        let stored = batchStored
        batchStored.removeAll(keepingCapacity: true)
        if let last = stored.last { keys.committed(through: last.payloadID) }
        for item in stored where unfolded.count < maxRetained { unfolded[item.payloadID] = item }
        return (results, true, false, stored)
    }

    /// Rolls the batch back; `storage` tells whether the storage itself failed (then a retry
    /// request by request cannot help).
    private func abort(_ count: Int, _ error: StoreError, storage: Bool) -> (
        results: [Result<IngestOutcome, StoreError>], committed: Bool, storageUnavailable: Bool, stored: [StoredItem]
    ) {
        keys.rolledBack((batchStored + requestStored).map { ($0.payloadID, $0.appID, $0.item.contentHash) })
        requestStored.removeAll(keepingCapacity: true)
        batchStored.removeAll(keepingCapacity: true)
        connection.rollbackQuietly()
        interner.rollback()
        for stage in stages { stage.batchAborted() }
        var failure = error
        if storage && failure.code != .unavailable {
            failure = StoreError(.unavailable, "storage is temporarily unavailable", cause: error.description)
        } else if !storage && failure.code != .internal {
            failure = StoreError(.internal, "internal storage error", cause: error.description)
        }
        return (Array(repeating: .failure(failure), count: count), false, storage, [])
    }

    private func write(_ request: IngestRequest, in session: WriteSession) throws(StoreError) -> IngestOutcome {
        guard let appID = try session.id(.app, request.app) else {
            throw StoreError(.invalid, "the app bundle id is empty")
        }
        if let key = request.idempotencyKey {
            if let stored = try connection.first(Self.findIdempotency, [.integer(appID), .text(key)], { $0.text(0) }) {
                let ids = try Self.parseIDs(stored)
                return IngestOutcome(accepted: 0, duplicates: ids.count, ids: ids, replayed: true)
            }
        }
        var outcome = IngestOutcome(accepted: 0, duplicates: 0, ids: [])
        outcome.ids.reserveCapacity(request.items.count)
        for item in request.items {
            let (id, isNew) = try write(item, in: session)
            outcome.ids.append(id)
            if isNew { outcome.accepted += 1 } else { outcome.duplicates += 1 }
        }
        if let key = request.idempotencyKey {
            try connection.run(
                Self.insertIdempotency,
                [
                    .integer(appID), .text(key), .integer(Int64(outcome.accepted)), .integer(Int64(outcome.duplicates)),
                    .text(Self.formatIDs(outcome.ids)), .integer(WallClock.nowSeconds()),
                ])
        }
        return outcome
    }

    /// Writes one item unless its content is already stored; returns its payload id and whether it is new.
    private func write(_ item: IngestItem, in session: WriteSession) throws(StoreError) -> (Int64, Bool) {
        guard item.contentHash.count == 32 else {
            throw StoreError(.invalid, "the content hash must be 32 bytes (SHA-256)")
        }
        guard let appID = try session.id(.app, item.app) else {
            throw StoreError(.invalid, "the app bundle id is empty")
        }
        if let existing = try keys.find(app: appID, hash: item.contentHash, on: connection) {
            return (existing, false)
        }
        // Everything about the item was decided by ingest (`IngestItem`): this only persists it.
        let (meta, begin, end) = (item.meta, item.begin, item.end)
        let occurredAt = item.occurredAt
        let day = item.day.string
        try connection.run(
            Self.insertPayload,
            [
                .integer(appID), .text(item.family.rawValue),
                .integer(try session.id(.appVersion, meta.appVersion)),
                .integer(try session.id(.build, meta.appBuildVersion)),
                .integer(try session.id(.osVersion, meta.osVersion)),
                .integer(try session.id(.deviceType, meta.deviceType)),
                .integer(try session.id(.region, meta.regionFormat)),
                .integer(try session.id(.architecture, meta.platformArchitecture)),
                .text(day), .integer(begin?.epochSeconds), .integer(end?.epochSeconds),
                begin?.epochSeconds == nil ? .text(begin?.raw) : .null,
                end?.epochSeconds == nil ? .text(end?.raw) : .null,
                .integer(item.receivedAt), .blob(item.contentHash),
                .integer(Int64(max(0, item.document.unparsedMeasurements))),
                .integer(Int64(max(0, item.document.droppedValues))), .text(item.format.rawValue),
                .integer(item.isDeviceDay ? 1 : 0),
            ])
        let payloadID = connection.lastInsertRowID
        try connection.run(Self.insertRaw, [.integer(payloadID), .blob(item.raw)])
        let stored = StoredItem(payloadID: payloadID, appID: appID, item: item, occurredAt: occurredAt, day: day)
        for stage in stages {
            try stage.write(stored, in: session)
        }
        requestStored.append(stored)
        keys.inserted(payloadID, app: appID, hash: item.contentHash)
        return (payloadID, true)
    }

    /// Moves the tail of stored contents into the lookup tables, one step of a merge, when one is
    /// under way or the tail is large enough, or (`idle`) old enough: whether a step committed.
    func mergeKeysIfDue(idle: Bool) throws(StoreError) -> Bool {
        guard keysLoaded, keys.isMerging || keys.mergeDue || (idle && keys.idleMergeDue) else { return false }
        try keys.mergeStep(on: connection)
        return true
    }

    static func formatIDs(_ ids: [Int64]) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    static func parseIDs(_ text: String) throws(StoreError) -> [Int64] {
        guard text.hasPrefix("["), text.hasSuffix("]") else {
            throw StoreError(.internal, "internal storage error", cause: "damaged idempotency record")
        }
        let inner = text.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        var ids: [Int64] = []
        for part in inner.split(separator: ",") {
            guard let id = Int64(part) else {
                throw StoreError(.internal, "internal storage error", cause: "damaged idempotency record")
            }
            ids.append(id)
        }
        return ids
    }
}
