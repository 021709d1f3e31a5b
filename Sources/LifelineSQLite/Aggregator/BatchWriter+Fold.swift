import LifelineIngest
import LifelineModel
import LifelineStorage
import NIOCore

/// The aggregator stage: folds committed documents into the rollups, crash groups and per-state
/// rows, in batches, behind the door, on the writer's connection (SQLite has one writer).
///
/// Its progress is the watermark `aggregation_state.folded_through`, read and advanced inside the
/// fold's own transaction: a fold that does not commit leaves it where it was (the documents are
/// folded again by the next one), a fold that commits never sees them again. Documents still in
/// memory (``BatchWriter/unfolded``) are folded as decoded; the others (after a restart, past
/// the memory bound, written by another process, or a refold) are decoded again from their raw
/// copy.
extension BatchWriter {
    /// What one fold did.
    struct FoldResult {
        /// Documents folded (the watermark passed them).
        var folded = 0
        /// Of those, documents that could not be folded (unreadable raw copy, or a failing row):
        /// kept raw, counted nowhere.
        var skipped = 0
        /// The watermark after the fold.
        var through: Int64 = 0
        /// Whether documents above the watermark remain.
        var more = false
        /// Folded documents whose explorer rows are held in memory (0: all in the stored rows).
        var explorerHeld = 0
        /// Folded documents whose rollups are cached in memory (0: all stored).
        var rollupsHeld = 0
    }

    /// Whether figures are held in memory unwritten: the explorer's rows, the version-level
    /// rollups.
    var holdsFigures: Bool { explorer?.holdsRows == true || rollups?.holdsCache == true }

    /// When held figures fall due by age; `nil` when nothing is due until the explorer's worker
    /// wakes the writer.
    var figuresDueAt: ContinuousClock.Instant? {
        let explorer = explorer?.dueAt
        let rollups = rollups?.dueAt
        guard let explorer, let rollups else { return explorer ?? rollups }
        return min(explorer, rollups)
    }

    /// Whether held figures are due to be written.
    var figuresDue: Bool { figuresDueAt.map { ContinuousClock.now >= $0 } ?? false }

    static let readWatermark = "SELECT folded_through FROM aggregation_state WHERE id = 1"
    static let writeWatermark = "UPDATE aggregation_state SET folded_through = ?, folded_at_ms = ? WHERE id = 1"
    static let nextUnfolded = "SELECT id FROM payloads WHERE id > ? ORDER BY id LIMIT ?"
    static let readStored = """
        SELECT p.app, a.bundle_id, p.kind, p.received_at_ms, coalesce(r.raw, k.raw)
        FROM payloads p JOIN apps a ON a.id = p.app LEFT JOIN payload_raw r ON r.payload = p.id
            LEFT JOIN payload_raw_packed k ON k.payload = p.id
        WHERE p.id = ?
        """

    /// The watermarks and the highest stored payload id (outside a transaction); `explorer` is
    /// the lowest of the held figures' (the explorer's and both rollup levels').
    func foldState() throws(StoreError) -> (folded: Int64, explorer: Int64, head: Int64, pending: Int) {
        let folded = try connection.first(Self.readWatermark) { $0.int64(0) } ?? 0
        let explorer = try connection.first(ExplorerStage.readWatermarks) { min($0.int64(0), $0.int64(1)) } ?? 0
        let rollups = try connection.first(RollupStage.readWatermarks) { min($0.int64(0), $0.int64(1)) } ?? 0
        let head = try connection.first(PayloadKeys.readHead) { $0.int64(0) } ?? 0
        let pending =
            try connection.first("SELECT count(*) FROM payloads WHERE id > ?", [.integer(folded)]) { $0.int64(0) }
            ?? 0
        return (folded, min(explorer, rollups, folded), head, Int(pending))
    }

    /// Folds up to `limit` documents above the watermark in one transaction. `writeRollups`: the
    /// rollups' held cells are written too (a reader waits for them), whatever their age;
    /// `writeExplorer`: the explorer's held rows and the rollups' (a reader of the explorer waits).
    func fold(
        limit: Int, writeRollups: Bool = false, writeExplorer: Bool = false,
        onSkip: (Int64, StoreError) -> Void = { _, _ in }
    ) throws(StoreError) -> FoldResult {
        // Not synced at COMMIT: a fold a power loss takes is folded again from the raw copies
        // (``Connection/syncCommits(_:)``); the door's next commit syncs it with its own.
        try connection.syncCommits(false)
        try connection.execute("BEGIN IMMEDIATE")
        var result = FoldResult()
        do throws(StoreError) {
            let watermark = try connection.first(Self.readWatermark) { $0.int64(0) } ?? 0
            let ids = try connection.query(Self.nextUnfolded, [.integer(watermark), .integer(Int64(limit) + 1)]) {
                $0.int64(0)
            }
            result.more = ids.count > limit
            let batch = Array(ids.prefix(limit))
            result.through = batch.last ?? watermark
            try beginExplorer(foldedThrough: watermark, through: result.through, write: writeExplorer)
            try beginRollups(
                foldedThrough: watermark, through: result.through, write: writeRollups || writeExplorer)
            let counts = try foldItems(batch, useRetained: true, onSkip: onSkip)
            result.folded = counts.folded
            result.skipped = counts.skipped
            try connection.run(
                Self.writeWatermark, [.integer(result.through), .integer(WallClock.nowMilliseconds())])
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackQuietly()
            interner.rollback()
            for stage in foldStages { stage.batchAborted() }
            throw error
        }
        interner.commit()
        result.explorerHeld = explorer?.committed() ?? 0
        result.rollupsHeld = rollups?.committed() ?? 0
        // The ids first: removing while iterating `unfolded.keys` copied the dictionary.
        for id in unfolded.keys.filter({ $0 <= result.through }) { unfolded[id] = nil }
        return result
    }

    /// Writes the explorer's rows and the rollups of both levels up to the fold's watermark,
    /// inside the caller's transaction (the refold's, before it rebuilds: a server may hold the
    /// documents above `explorer_through` and the rollup parts' watermarks in memory, which this
    /// replays from their raw copies).
    func catchUpHeld() throws(StoreError) {
        let watermark = try connection.first(Self.readWatermark) { $0.int64(0) } ?? 0
        if let explorer {
            try beginExplorer(foldedThrough: watermark, through: watermark, write: true)
            try explorer.beforeCommit(on: connection)
            explorer.committed()
        }
        if let rollups {
            try beginRollups(foldedThrough: watermark, through: watermark, write: true)
            try rollups.beforeCommit(on: connection)
            rollups.committed()
        }
    }

    private func beginRollups(foldedThrough: Int64, through: Int64, write: Bool) throws(StoreError) {
        guard let rollups else { return }
        try rollups.begin(
            watermarks: try rollupWatermarks(foldedThrough: foldedThrough), foldedThrough: foldedThrough,
            through: through, write: write
        ) { from, through throws(StoreError) in
            try replayRollups(rollups, from: from, through: through)
        }
    }

    /// Every rollup part's stored watermark, ordered as ``RollupStage/index(_:part:)``: a part
    /// without a row (only a hand-edited file lacks one) sits on its level's lowest.
    private func rollupWatermarks(foldedThrough: Int64) throws(StoreError) -> [Int64] {
        let (fine, version) =
            try connection.first(RollupStage.readWatermarks) { ($0.int64(0), $0.int64(1)) } ?? (0, 0)
        var marks = (0..<2 * RollupParts.count).map { RollupStage.place($0).level == .fine ? fine : version }
        let rows = try connection.query(RollupStage.readPartWatermarks) { ($0.int64(0), $0.int64(1), $0.int64(2)) }
        let parts = 0..<Int64(RollupParts.count)
        for (level, part, through) in rows where (0...1).contains(level) && parts.contains(part) {
            marks[RollupStage.index(level == 0 ? .fine : .byVersion, part: Int(part))] = through
        }
        // Only a hand-edited file holds a watermark above the fold's (put back).
        if marks.contains(where: { $0 > foldedThrough }) {
            try connection.run("UPDATE rollup_watermarks SET through = min(through, ?)", [.integer(foldedThrough)])
            marks = marks.map { min($0, foldedThrough) }
            try connection.run(
                RollupStage.writeLevelWatermarks,
                [
                    .integer(marks[..<RollupParts.count].min() ?? foldedThrough),
                    .integer(marks[RollupParts.count...].min() ?? foldedThrough),
                ])
        }
        return marks
    }

    /// Replays the documents in (`from`, `through`] into the rollup stage alone (which keeps their
    /// cells of the levels that miss them): metric documents from their raw copies, diagnostics
    /// from their stored rows. A document that does not read or write is left out, as its fold
    /// left it out of every figure.
    private func replayRollups(_ rollups: RollupStage, from: Int64, through: Int64) throws(StoreError) {
        let rows = try connection.query(
            "SELECT id, app, kind FROM payloads WHERE id > ? AND id <= ? ORDER BY id",
            [.integer(from), .integer(through)]
        ) { (id: $0.int64(0), app: $0.int64(1), metric: $0.text(2) == PayloadKind.metric.rawValue) }
        let session = WriteSession(connection: connection, interner: interner)
        for row in rows {
            do throws(StoreError) {
                if row.metric {
                    guard let stored = (try? readStoredItem(row.id)) ?? nil else { continue }
                    try rollups.write(stored, in: session)
                } else {
                    try rollups.writeDiagnostics(payload: row.id, app: row.app, on: connection)
                }
                rollups.requestReleased()
            } catch {
                if error.code == .unavailable { throw error }
                rollups.requestRolledBack()
            }
        }
    }

    private func beginExplorer(foldedThrough: Int64, through: Int64, write: Bool) throws(StoreError) {
        guard let explorer else { return }
        let read = try ExplorerStage.storedWatermarks(on: connection)
        var stored = read.parts
        if (stored.fine + stored.version).contains(where: { $0 > foldedThrough })
            || read.lowest != (stored.fine.min() ?? 0, stored.version.min() ?? 0)
        {
            // Only a hand-edited file holds this (the fold's watermark put back): the parts'
            // watermarks go back with it, and their documents are folded again into fresh rows.
            stored.fine = stored.fine.map { min($0, foldedThrough) }
            stored.version = stored.version.map { min($0, foldedThrough) }
            try ExplorerStage.storeWatermarks(stored, on: connection)
        }
        try explorer.begin(stored: stored, foldedThrough: foldedThrough, through: through, write: write) {
            from, through throws(StoreError) in
            try replayExplorer(explorer, from: from, through: through)
        }
    }

    /// Replays the metric documents in (`from`, `through`] into the explorer stage alone, from
    /// their raw copies: they are in the rollups, not yet in the explorer's stored rows. A document
    /// that does not read or write is left out, as its fold left it out of every figure.
    private func replayExplorer(_ explorer: ExplorerStage, from: Int64, through: Int64) throws(StoreError) {
        let ids = try connection.query(
            "SELECT id FROM payloads WHERE id > ? AND id <= ? AND kind = 'metric' ORDER BY id",
            [.integer(from), .integer(through)]
        ) { $0.int64(0) }
        let session = WriteSession(connection: connection, interner: interner)
        for id in ids {
            guard let stored = (try? readStoredItem(id)) ?? nil else { continue }
            do throws(StoreError) {
                try explorer.write(stored, in: session)
                explorer.requestReleased()
            } catch {
                if error.code == .unavailable { throw error }
                explorer.requestRolledBack()
            }
        }
    }

    /// Folds the documents `ids` inside the caller's transaction (the refold's): each from its
    /// raw copy.
    func foldAgain(_ ids: [Int64]) throws(StoreError) -> (folded: Int, skipped: Int) {
        do throws(StoreError) {
            return try foldItems(ids, useRetained: false, onSkip: { _, _ in })
        } catch {
            for stage in foldStages { stage.batchAborted() }
            throw error
        }
    }

    /// Runs the fold stages for `ids` (one savepoint each: a document that fails is skipped
    /// alone) and flushes their deferred rows, inside the open transaction.
    private func foldItems(
        _ ids: [Int64], useRetained: Bool, onSkip: (Int64, StoreError) -> Void
    ) throws(StoreError) -> (folded: Int, skipped: Int) {
        var folded = 0
        var skipped = 0
        let session = WriteSession(connection: connection, interner: interner)
        for id in ids {
            folded += 1
            let stored: StoredItem
            do throws(StoreError) {
                if useRetained, let retained = unfolded[id] {
                    stored = retained
                } else {
                    guard let decoded = try readStoredItem(id) else { throw Self.unreadable(id, "no raw copy") }
                    stored = decoded
                }
            } catch {
                skipped += 1
                onSkip(id, error)
                continue
            }
            try connection.run("SAVEPOINT fold")
            do throws(StoreError) {
                for stage in foldStages { try stage.write(stored, in: session) }
                try connection.run("RELEASE fold")
                interner.releaseSavepoint()
                for stage in foldStages { stage.requestReleased() }
            } catch {
                if error.code == .unavailable || !connection.inTransaction { throw error }
                try connection.run("ROLLBACK TO fold")
                try connection.run("RELEASE fold")
                interner.rollbackSavepoint()
                for stage in foldStages { stage.requestRolledBack() }
                skipped += 1
                onSkip(id, error)
            }
        }
        for stage in foldStages { try stage.beforeCommit(on: connection) }
        return (folded, skipped)
    }

    /// Decodes payload `id` again from its raw copy, as ingest decided it.
    private func readStoredItem(_ id: Int64) throws(StoreError) -> StoredItem? {
        let row = try connection.first(Self.readStored, [.integer(id)]) {
            (
                app: $0.int64(0), bundle: $0.text(1), kind: $0.text(2), received: $0.int64(3),
                raw: $0.isNull(4) ? nil : $0.blob(4)
            )
        }
        guard let row, let raw = row.raw else { return nil }
        let item: IngestItem
        let decoded = IngestPipeline.redecode(raw: raw, kind: row.kind, app: row.bundle, receivedAt: row.received) {
            rawDictionaries.dictionary($0, on: connection)
        }
        switch decoded {
        case .success(let decoded): item = decoded
        case .failure(let error): throw Self.unreadable(id, error.reason)
        }
        return StoredItem(payloadID: id, appID: row.app, item: item, occurredAt: item.occurredAt, day: item.day.string)
    }

    private static func unreadable(_ id: Int64, _ why: String) -> StoreError {
        StoreError(.invalid, "payload \(id) could not be folded", cause: why)
    }
}
