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
/// A document's cells are kept or dropped with its savepoint, and rows of equal key gather their
/// observations in memory, each as an ``ExplorerPendingRow`` (bytes), replayed into an
/// ``ExplorerCellMapBuilder`` (cells by metric ordinal) when it is written.
/// The extraction and the adds run on the stage's ``ExplorerWorker`` thread, beside the fold's
/// other stages; the rows are read only once it has added every released document. Without a ``Deferral`` (refold, offline folds) they are upserted at every fold, just
/// before COMMIT, merged into the stored rows by `ll_merge_explorer_map`. With one (the server's
/// writer), the rows are **held** across folds and written at most every
/// ``Deferral/maxAge``, when a reader waits, or when ``Deferral/maxRows`` rows or
/// ``Deferral/maxDocuments`` documents are held: a packed row is decoded, merged and encoded once
/// per write, not once per fold of a few dozen documents. Their own watermark
/// (`aggregation_state.explorer_through`, migration 0017) moves in the transaction that writes
/// them; the held rows always cover the documents between it and the fold's watermark, and are
/// rebuilt from the raw copies when they do not (after a restart, a failed fold, or another
/// process writing the rows: ``begin(versionThrough:explorerThrough:foldedThrough:through:write:catchUp:)``).
///
/// **Version rows stay in memory between writes.** Once prepared, sealed version-level rows go to
/// the worker's cache (``ExplorerWorker/versionCache``) rather than to the table: a version-day
/// row is touched by most seals, for a document or two of new figures each, and rewriting it (2–5
/// KB) at each was most of what a seal wrote. The cache is written every
/// ``Deferral/versionMaxAge``, past ``Deferral/versionMaxBytes``, and whenever every row is
/// (a reader waits, the writer stops); its documents are those between
/// `aggregation_state.explorer_version_through` (migration 0019, moved when it is written) and
/// `explorer_through`, replayed into the version rows only when it is lost.
final class ExplorerStage: ItemWriteStage {
    static let writeWatermark = "UPDATE aggregation_state SET explorer_through = ? WHERE id = 1"
    static let readWatermarks = "SELECT explorer_through, explorer_version_through FROM aggregation_state WHERE id = 1"
    /// The lowest of the version rows' part watermarks.
    static let writeVersionWatermark = "UPDATE aggregation_state SET explorer_version_through = ? WHERE id = 1"

    let deferral: Deferral?
    /// Extracts and adds each released document on a thread of its own, into the rows not written
    /// yet, per level: the current fold's, and with a deferral those of the folds before it since
    /// the last write. Read and changed here only after ``ExplorerWorker/drain()``. With a read
    /// connection it also prepares the merge of sealed rows.
    let worker: ExplorerWorker
    /// The held rows' documents: ids in (`base`, `through`], where `base` is the stored
    /// `explorer_through` they sit on; nil when nothing valid is held (at start, after a failure).
    /// The sealed rows (if any) hold (`base`, `sealed.through`], the worker's rows the rest.
    var held: (base: Int64, through: Int64)?
    /// The stored watermarks of the version rows' parts (``RollupParts``, migration 0026) the
    /// version rows in memory (``ExplorerWorker/versionCache``) sit on, each with the documents of
    /// its part above it up to `held.base` (`nil` with `held`). Version rows are kept there only
    /// when the worker prepares writes.
    var versionBases: [Int64]?
    /// Documents whose version rows are in the worker's cache only, when the first went there, and
    /// the cache's bytes.
    var cachedDocuments = 0
    var cachedSince: ContinuousClock.Instant?
    var cachedBytes = 0
    /// The cache being written one part per fold (``writeNextCachePart(on:)``): the parts left, the
    /// watermark each takes (`explorer_through` when the write began: the cache then held every
    /// document up to it, and takes no more until the last part is written), and
    /// ``cachedDocuments`` then (seals of fine rows alone written meanwhile add theirs, whose
    /// version rows stay unsealed: still held once the last part is written). Each part comes with
    /// its cached rows' keys, grouped once when the write begins.
    var cacheWrite: (parts: [(part: Int, keys: [ExplorerRowKey])], through: Int64, documents: Int)?
    /// Documents in the worker's rows (not the sealed ones), and when the first came.
    private var heldDocuments = 0
    private var heldSince: ContinuousClock.Instant?
    /// Rows sealed for a write (``ExplorerWorker/sealed``), whose merge with the stored rows the
    /// worker prepares; written as prepared by a later fold.
    private var sealed: Seal?
    /// Binds and writes the rows.
    var rowWriter = ExplorerRowWriter()
    /// A seal: its documents, up to `through`, and whether it took the version rows too.
    private struct Seal {
        var through: Int64
        var documents: Int
        var versions: Bool
    }
    /// The worker's unsealed version rows (``ExplorerWorker/byVersion``) hold documents whose fine
    /// rows were sealed without them: the cache cannot be written until a seal takes them.
    var versionsUnsealed = false
    /// The current fold: where it ends, whether it must write every row, where its transaction
    /// moved `explorer_through` (nil: not moved), whether it wrote every row, what it sealed.
    private var foldThrough: Int64?
    private var forceWrite = false
    var wroteThrough: Int64?
    /// The version rows' part watermarks as the current fold's transaction left them (nil: not
    /// moved).
    var wroteVersionBases: [Int64]?
    private var wroteAll = false
    private var sealedNow: Seal?
    /// The current document, until its savepoint is released (then handed to the worker) or
    /// rolled back.
    private var document: ExplorerWorker.Document?

    /// `reader`: a connection of the same database on which the worker prepares sealed rows' writes
    /// (the server's writer); without one, held rows are merged in SQL when written, and no version
    /// row is kept in memory. `onPrepared`
    /// runs when a prepare ends (it wakes the writer).
    init(deferral: Deferral? = nil, reader: Connection? = nil, onPrepared: @escaping @Sendable () -> Void = {}) {
        self.deferral = deferral
        worker = ExplorerWorker(
            reader: deferral == nil ? nil : reader,
            fineProbe: deferral?.fineProbe ?? ExplorerWorker.defaultFineProbe, onPrepared: onPrepared)
    }

    deinit { worker.stop() }

    /// Whether rows are held unwritten (once the worker added what it was given). Sealed rows, or
    /// documents handed over or cached, answer without waiting for the worker: the writer asks
    /// whenever the door is idle, and a drain would wait out a whole prepare (60 ms at the median
    /// on the iOS 27 load).
    var holdsRows: Bool {
        if sealed != nil || heldDocuments > 0 || cachedDocuments > 0 { return true }
        worker.drain()
        return !worker.fine.isEmpty || !worker.byVersion.isEmpty || !worker.versionCache.isEmpty
    }

    /// When held rows fall due: by age (the other bounds are checked at each fold), or at once
    /// when sealed rows are prepared; `nil` when nothing is due until the worker wakes the writer.
    var dueAt: ContinuousClock.Instant? {
        guard let deferral else { return nil }
        if sealed != nil { return worker.isPreparing ? nil : .now }
        let rows = heldDocuments > 0 ? heldSince.map { $0 + deferral.maxAge } : nil
        let cache = cachedSince.map { $0 + deferral.versionMaxAge }
        guard let rows, let cache else { return rows ?? cache }
        return min(rows, cache)
    }

    /// Whether held rows are due to be written.
    var writeDue: Bool { dueAt.map { ContinuousClock.now >= $0 } ?? false }

    /// A fold begins (in its transaction) over the stored watermarks (each version part's in
    /// `versionThroughs` ≤ `explorer_through` ≤ `folded_through`). Held rows that do not sit on
    /// them or do not reach `foldedThrough` are dropped, and the documents between them are read
    /// again (`catchUp` hands their ids to the fold, which replays them through
    /// ``write(_:in:)``): those up to `explorerThrough` into the version rows only
    /// (`versionOnly`), each only when it is above its part's watermark; the others into both.
    /// `through` is where this fold will end; `write` forces the rows out.
    func begin(
        versionThroughs: [Int64], explorerThrough: Int64, foldedThrough: Int64, through: Int64, write: Bool,
        catchUp: (_ from: Int64, _ through: Int64, _ versionOnly: Bool) throws(StoreError) -> Void
    ) throws(StoreError) {
        foldThrough = through
        forceWrite = write || deferral == nil
        wroteThrough = nil
        wroteVersionBases = nil
        wroteAll = false
        sealedNow = nil
        if let held, held.base == explorerThrough, held.through == foldedThrough, versionBases == versionThroughs {
            return
        }
        dropHeld()
        held = (explorerThrough, foldedThrough)
        versionBases = versionThroughs
        if let lowest = versionThroughs.min(), lowest < explorerThrough {
            heldSince = .now
            try catchUp(lowest, explorerThrough, true)
        }
        if explorerThrough < foldedThrough {
            heldSince = .now
            try catchUp(explorerThrough, foldedThrough, false)
        }
    }

    /// Whether ``write(_:in:)`` replays documents into the version rows only (``begin``'s catch-up).
    var replaysVersionOnly = false

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .metric(let metric) = stored.item.document.content, metric.isDeviceDay else { return }
        let meta = metric.meta
        let day = Int64(RollupDeltas.day(epochSeconds: stored.occurredAt))
        let version = try session.id(.appVersion, meta.appVersion) ?? 0
        // A version-only replay skips a document its part's stored version rows already hold.
        if replaysVersionOnly, let bases = versionBases,
            stored.payloadID <= bases[RollupParts.part(app: stored.appID, day: day, version: version)]
        {
            return
        }
        document = ExplorerWorker.Document(
            app: stored.appID, day: day, version: version,
            os: try session.id(.osVersion, meta.osVersion) ?? 0,
            device: try session.id(.deviceType, meta.deviceType) ?? 0, metric: metric,
            versionOnly: replaysVersionOnly)
    }

    func requestReleased() {
        guard let document else { return }
        self.document = nil
        worker.submit(document)
        heldDocuments += 1
        if heldSince == nil { heldSince = .now }
    }

    func requestRolledBack() { document = nil }

    /// The fold did not commit: what is held may include its documents, so it is dropped and
    /// rebuilt from the raw copies at the next fold.
    func batchAborted() {
        rowWriter.transactionEnded(committed: false)
        document = nil
        dropHeld()
        foldThrough = nil
    }

    private func dropHeld() {
        worker.drain()
        worker.fine = [:]
        worker.byVersion = [:]
        worker.sealed = ExplorerWorker.SealedRows()
        worker.prepared = nil
        worker.versionCache = [:]
        sealed = nil
        sealedNow = nil
        versionsUnsealed = false
        held = nil
        versionBases = nil
        heldDocuments = 0
        heldSince = nil
        cachedDocuments = 0
        cachedSince = nil
        cachedBytes = 0
        cacheWrite = nil
    }

    /// Writes what is due, and moves `explorer_through` with it: sealed rows once the worker
    /// prepared them (their version rows into the worker's cache when it keeps them); every row
    /// when forced (a reader waits, the writer stops, no deferral); one part of the cached version
    /// rows per fold once the cache is due, moving that part's watermark; and seals the worker's
    /// rows when they are due by age, documents or rows (written by a later fold, once prepared).
    func beforeCommit(on connection: Connection) throws(StoreError) {
        rowWriter.transactionBegins()
        guard let through = foldThrough else {
            // A fold that did not begin (``BatchWriter/foldAgain(_:)``, each chunk of a refold,
            // with no deferral: nothing cached): written at once, and forgotten (the next chunk
            // adds only its own documents).
            worker.drain()
            try writeRows(on: connection)
            dropHeld()
            return
        }
        // Written once prepared; awaited when forced, or when the rows added beside it reach
        // ``Deferral/crowdLimit(preparingHeldVersions:)``.
        let crowded =
            deferral.map { boundedRows($0) >= $0.crowdLimit(preparingHeldVersions: sealed?.versions == true) } ?? false
        if let sealed, forceWrite || crowded || !worker.isPreparing {
            // Otherwise the prepare is done, and the worker adding this fold's documents
            // meanwhile touches other rows.
            if forceWrite {
                worker.drain()
            } else if crowded {
                worker.awaitPrepared()
            }
            try writeSealed(sealed, on: connection)
            try connection.run(Self.writeWatermark, [.integer(sealed.through)])
            wroteThrough = sealed.through
            worker.dispose(worker.sealed, worker.prepared)
            worker.sealed = ExplorerWorker.SealedRows()
            worker.prepared = nil
            self.sealed = nil
        }
        if forceWrite { return try writeAll(through: through, on: connection) }
        // A fold that wrote sealed rows writes nothing more, so that the cache's write and the
        // next seal's are not added to it: the door's next batch waits for the whole fold.
        guard let deferral, sealed == nil, wroteThrough == nil else { return }
        // The cache falls due: its write begins now, or, while unsealed version rows hold some of
        // its documents, at the fold after the seal that takes them. It is written one part per
        // fold, and no seal takes version rows into it meanwhile.
        var versionsDue = !deferral.holdsVersions || worker.heldVersionRows >= deferral.versionMaxRows
        if cacheWrite == nil, let cachedSince,
            ContinuousClock.now >= cachedSince + deferral.versionMaxAge || cachedBytes >= deferral.versionMaxBytes
        {
            if versionsUnsealed { versionsDue = true } else { try beginCacheWrite() }
        }
        if cacheWrite != nil {
            versionsDue = false
            try writeNextCachePart(on: connection)
        }
        guard heldDocuments > 0 || (versionsDue && versionsUnsealed) else { return }
        let due =
            (versionsDue && deferral.holdsVersions) || writeDue || heldDocuments >= deferral.maxDocuments
            || boundedRows(deferral) >= deferral.maxRows
        guard due else { return }
        // No read connection: written now, merged in SQL.
        guard worker.canPrepare else { return try writeAll(through: through, on: connection) }
        // Sealed by the worker once this fold commits, after its last document: the writer does
        // not wait for the worker to catch up.
        sealedNow = Seal(through: through, documents: heldDocuments, versions: versionsDue)
    }

    /// The held rows ``Deferral/maxRows`` bounds: both levels, or the fine ones alone while version
    /// rows are held unsealed.
    private func boundedRows(_ deferral: Deferral) -> Int {
        worker.heldRows + (deferral.holdsVersions ? 0 : worker.heldVersionRows)
    }

    /// Every row the worker holds and caches, merged in SQL, and both watermarks moved to `through`.
    private func writeAll(through: Int64, on connection: Connection) throws(StoreError) {
        worker.drain()
        // The unsealed version rows are merged in SQL right after the cache (a failing fold drops
        // them with everything held).
        versionsUnsealed = false
        try writeCache(through: through, on: connection)
        try writeRows(on: connection)
        try connection.run(Self.writeWatermark, [.integer(through)])
        wroteThrough = through
        wroteAll = true
    }

    /// The worker's rows, merged into the stored ones in SQL.
    private func writeRows(on connection: Connection) throws(StoreError) {
        try rowWriter.merge(fine: worker.fine, versions: worker.byVersion, on: connection)
    }

    /// The sealed rows: those the worker prepared as they are, the version ones into its cache (a
    /// worker prepares only for a deferral); then those it could not prepare
    /// (``ExplorerWorker/sealed``), merged in SQL. When the seal took the version rows, that
    /// merge comes after the cached rows, which it would otherwise miss, and
    /// `explorer_version_through` moves with `explorer_through`; when it did not, the version
    /// rows of its documents are still in memory, and only fine rows are merged.
    private func writeSealed(_ seal: Seal, on connection: Connection) throws(StoreError) {
        for row in worker.prepared ?? [] {
            guard row.level == .fine else {
                cachedBytes += row.cells.count - (worker.versionCache[row.key]?.count ?? 0)
                worker.versionCache[row.key] = row.cells
                continue
            }
            try rowWriter.write(row.cells, at: row.key, row.level, merging: row.mergesStored, on: connection)
        }
        cachedDocuments += seal.documents
        if cachedSince == nil { cachedSince = .now }
        guard !worker.sealed.isEmpty else { return }
        let sealedRows = worker.sealed
        guard seal.versions else {
            return try rowWriter.merge(fine: sealedRows.fine, versions: sealedRows.byVersion, on: connection)
        }
        try writeCache(through: seal.through, on: connection)
        try rowWriter.merge(fine: sealedRows.fine, versions: sealedRows.byVersion, on: connection)
    }

    /// The fold committed: the rows it wrote are gone from memory, sealed rows go to the worker to
    /// be prepared, the rest is held up to the fold's end. Returns the documents whose rows are
    /// held or cached (0: every folded document is in the stored rows).
    @discardableResult
    func committed() -> Int {
        rowWriter.transactionEnded(committed: true)
        guard let through = foldThrough else {
            dropHeld()
            return 0
        }
        foldThrough = nil
        let base = wroteThrough ?? held?.base ?? through
        held = (base, through)
        if let wroteVersionBases { versionBases = wroteVersionBases }
        if wroteAll {
            worker.fine = [:]
            worker.byVersion = [:]
            heldDocuments = 0
            heldSince = nil
            versionsUnsealed = false
        }
        if let sealedNow {
            self.sealedNow = nil
            sealed = sealedNow
            heldDocuments = 0
            heldSince = nil
            versionsUnsealed = !sealedNow.versions
            _ = worker.submitSealAndPrepare(
                base: base, versionBases: versionBases ?? Array(repeating: base, count: RollupParts.count),
                versions: sealedNow.versions)
        }
        // Unsealed version rows of documents whose fine rows were sealed count too (at least one).
        let cached =
            cachedDocuments > 0 || !worker.versionCache.isEmpty || versionsUnsealed ? max(cachedDocuments, 1) : 0
        return heldDocuments + (sealed?.documents ?? 0) + cached
    }
}
