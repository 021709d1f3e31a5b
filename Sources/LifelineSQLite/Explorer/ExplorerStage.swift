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
/// process writing the rows: ``begin(stored:foldedThrough:through:write:catchUp:)``).
///
/// **Version rows are sealed one part at a time.** A version-day row is touched by most seals, for
/// a document or two of new figures each, and rewriting it (2–5 KB) at each was most of what a
/// seal wrote: with a deferral that holds them (``Deferral/holdsVersions``), the version rows stay
/// on the worker between seals, and a seal takes those of one part (``RollupParts``) every
/// ``Deferral/versionMaxAge`` divided by the parts' count (or at once past
/// ``Deferral/versionMaxRows``), round the parts in turn: each version row is merged into its
/// bytes about once per ``Deferral/versionMaxAge``, in prepares an eighth as long as one over
/// every row. Once prepared, a part's rows wait in the worker's cache
/// (``ExplorerWorker/versionCache``) for the next fold, which writes them and moves that part's
/// watermark (level 2 of `rollup_watermarks`, migration 0026; `explorer_version_through` keeps
/// the lowest).
///
/// **A seal's fine rows are written one part at a time too** (migration 0028): prepared, they wait
/// in ``fineCache`` and each fold writes the rows of one part (more
/// while they are few), moving that part's watermark (level 3; `explorer_through` keeps the
/// lowest). Written at once, a seal's 4,000–13,000 fine rows of the iOS 27 load took 15–48 ms of
/// one fold, and the door's next batch waited for them. A seal's documents count as held until
/// every part of both levels is written. Documents above a part's watermark are replayed into that
/// level's rows only when they are lost.
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
    /// Where the rows in memory (held, sealed and cached) end: with ``bases``, they hold the
    /// documents above each part's watermark up to here; nil when nothing valid is held (at
    /// start, after a failure).
    var held: Int64?
    /// The stored watermarks of both levels' parts (``RollupParts``; migrations 0026 and 0028) the
    /// rows in memory sit on (`nil` with ``held``).
    var bases: ExplorerWorker.PartBases?
    /// Parts whose sealed rows are cached (``fineCache``, ``ExplorerWorker/versionCache``), each
    /// with the watermark its write takes (the last seal that took it: its cached rows hold every
    /// document of the part up to there) and when it was first sealed there, oldest first
    /// (``writeDueCacheParts(_:versions:on:)``).
    var cacheReady: [(level: RollupLevel, part: Int, through: Int64, since: ContinuousClock.Instant)] = []
    /// Seals whose rows are not all written: each seal's end and documents, dropped once every
    /// part's watermark of both levels reaches it (what ``committed()`` counts as held).
    var pendingSeals: [(through: Int64, documents: Int)] = []
    /// Fine rows prepared by seals and not written yet, by part, in seal order (the writer's
    /// alone: written beside a running prepare too, ``ExplorerWorker``'s `recentFine`).
    var fineCache = Array(repeating: [ExplorerWorker.PreparedRow](), count: RollupParts.count)
    /// The version part the next seal of version rows takes, and when the last one was sealed.
    var nextVersionPart = 0
    var versionPartSealedAt: ContinuousClock.Instant?
    /// Documents in the worker's rows (not the sealed ones), and when the first came.
    private var heldDocuments = 0
    private var heldSince: ContinuousClock.Instant?
    /// Rows sealed for a write (``ExplorerWorker/sealed``), whose merge with the stored rows the
    /// worker prepares; written as prepared by a later fold.
    private var sealed: Seal?
    /// Binds and writes the rows.
    var rowWriter = ExplorerRowWriter()
    /// A seal: its documents, up to `through`, and the version parts it took.
    private struct Seal {
        var through: Int64
        var documents: Int
        var versionParts: [Int]
    }
    /// The current fold: where it ends, whether it must write every row, whether it wrote every
    /// row, what it sealed.
    private var foldThrough: Int64?
    private var forceWrite = false
    /// The parts' watermarks as the current fold's transaction left them (nil: none moved).
    var wroteBases: ExplorerWorker.PartBases?
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
        if sealed != nil || heldDocuments > 0 || !pendingSeals.isEmpty || !cacheReady.isEmpty { return true }
        worker.drain()
        return !worker.fine.isEmpty || !worker.byVersion.isEmpty || !worker.versionCache.isEmpty
            || fineCache.contains { !$0.isEmpty }
    }

    /// When held rows fall due: by age (the other bounds are checked at each fold), or at once
    /// when sealed rows are prepared or a version part waits in the cache; `nil` when nothing is
    /// due until the worker wakes the writer.
    var dueAt: ContinuousClock.Instant? {
        guard let deferral else { return nil }
        if sealed != nil { return worker.isPreparing ? nil : .now }
        let rows = heldDocuments > 0 ? heldSince.map { $0 + deferral.maxAge } : nil
        // Version parts fall due on their own only while no fine row is held (they ride with its seal).
        let versions =
            heldDocuments > 0 || pendingSeals.isEmpty || !deferral.holdsVersions ? nil : versionPartDueAt(deferral)
        return [rows, versions, cacheDueAt(deferral)].compactMap { $0 }.min()
    }

    /// A fold begins (in its transaction) over the stored watermarks of both levels' parts
    /// (`stored`, each ≤ `foldedThrough`). Held rows that do not sit on them or do not reach
    /// `foldedThrough` are dropped, and the documents above the lowest are read again (`catchUp`
    /// hands their ids to the fold, which replays them through ``write(_:in:)``), each into the
    /// levels whose part's watermark it is above. `through` is where this fold will end; `write`
    /// forces the rows out.
    func begin(
        stored: ExplorerWorker.PartBases, foldedThrough: Int64, through: Int64, write: Bool,
        catchUp: (_ from: Int64, _ through: Int64) throws(StoreError) -> Void
    ) throws(StoreError) {
        foldThrough = through
        forceWrite = write || deferral == nil
        wroteBases = nil
        wroteAll = false
        sealedNow = nil
        if held == foldedThrough, bases == stored { return }
        dropHeld()
        held = foldedThrough
        bases = stored
        if let lowest = (stored.fine + stored.version).min(), lowest < foldedThrough {
            heldSince = .now
            replaying = true
            defer { replaying = false }
            try catchUp(lowest, foldedThrough)
        }
    }

    /// Whether ``write(_:in:)`` replays documents (``begin``'s catch-up): each only into the levels
    /// whose stored part misses it.
    private var replaying = false

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .metric(let metric) = stored.item.document.content, metric.isDeviceDay else { return }
        let meta = metric.meta
        let day = Int64(RollupDeltas.day(epochSeconds: stored.occurredAt))
        let version = try session.id(.appVersion, meta.appVersion) ?? 0
        var levels = (fine: true, version: true)
        if replaying, let bases {
            let part = RollupParts.part(app: stored.appID, day: day, version: version)
            levels = (stored.payloadID > bases.fine[part], stored.payloadID > bases.version[part])
            guard levels.fine || levels.version else { return }
        }
        document = ExplorerWorker.Document(
            app: stored.appID, day: day, version: version,
            os: try session.id(.osVersion, meta.osVersion) ?? 0,
            device: try session.id(.deviceType, meta.deviceType) ?? 0, metric: metric,
            addsFine: levels.fine, addsVersion: levels.version)
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
        fineCache = Array(repeating: [], count: RollupParts.count)
        sealed = nil
        sealedNow = nil
        held = nil
        bases = nil
        heldDocuments = 0
        heldSince = nil
        cacheReady = []
        pendingSeals = []
        versionPartSealedAt = nil
    }

    /// Writes what is due: sealed rows once the worker prepared them (into the worker's caches);
    /// every row when forced (a reader waits, the writer stops, no deferral); one part of the
    /// caches per fold (more while they are small), moving that part's watermark; and seals the
    /// worker's rows when they are due by age, documents or rows, with the next version part when
    /// it is due (written by later folds, once prepared).
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
            deferral.map {
                boundedRows($0) >= $0.crowdLimit(preparingHeldVersions: sealed?.versionParts.isEmpty == false)
            } ?? false
        if let sealed, forceWrite || crowded || !worker.isPreparing {
            // Otherwise the prepare is done, and the worker adding this fold's documents
            // meanwhile touches other rows.
            if forceWrite {
                worker.drain()
            } else if crowded {
                worker.awaitPrepared()
            }
            try writeSealed(sealed, on: connection)
            worker.dispose(worker.sealed, worker.prepared)
            worker.sealed = ExplorerWorker.SealedRows()
            worker.prepared = nil
            self.sealed = nil
        }
        if forceWrite { return try writeAll(through: through, on: connection) }
        guard let deferral else { return }
        try writeDueCacheParts(deferral, versions: sealed == nil, on: connection)
        // The next seal once the last one's rows are in the caches.
        guard sealed == nil else { return }
        // The version parts due by age. While thousands of version rows are held, one part seals
        // at a time, as soon as it is due (its prepare stays short); while few are (a fleet's
        // busy cells), the parts due ride with the next seal of fine rows, which would otherwise
        // come more often than the fine rows need (a version-only seal when no fine row is held).
        let heldVersionRows = deferral.holdsVersions ? worker.heldVersionRows : 0
        let manyVersionRows = heldVersionRows >= deferral.maxRows
        let crowdedVersions = deferral.holdsVersions && heldVersionRows >= deferral.versionMaxRows
        var partsDue = versionPartsDue(deferral)
        if manyVersionRows { partsDue = min(partsDue, 1) }
        if crowdedVersions { partsDue = max(partsDue, 1) }
        guard heldDocuments > 0 || (partsDue > 0 && !pendingSeals.isEmpty) else { return }
        let rowsDue = heldSince.map { ContinuousClock.now >= $0 + deferral.maxAge } ?? false
        let due =
            heldDocuments == 0 || (manyVersionRows && partsDue > 0) || crowdedVersions || rowsDue
            || heldDocuments >= deferral.maxDocuments || boundedRows(deferral) >= deferral.maxRows
        guard due else { return }
        // No read connection: written now, merged in SQL.
        guard worker.canPrepare else { return try writeAll(through: through, on: connection) }
        // Sealed by the worker once this fold commits, after its last document: the writer does
        // not wait for the worker to catch up. Without held version rows, every seal takes them all.
        let parts =
            deferral.holdsVersions
            ? (0..<partsDue).map { (nextVersionPart + $0) % RollupParts.count } : Array(0..<RollupParts.count)
        sealedNow = Seal(through: through, documents: heldDocuments, versionParts: parts)
    }

    /// The held rows ``Deferral/maxRows`` bounds: both levels, or the fine ones alone while version
    /// rows are held unsealed.
    private func boundedRows(_ deferral: Deferral) -> Int {
        worker.heldRows + (deferral.holdsVersions ? 0 : worker.heldVersionRows)
    }

    /// Every row the worker holds and caches, merged in SQL, and every part's watermark moved to
    /// `through`.
    private func writeAll(through: Int64, on connection: Connection) throws(StoreError) {
        worker.drain()
        // The held rows are merged in SQL right after the caches (a failing fold drops them with
        // everything held).
        try writeCache(through: through, on: connection)
        try writeRows(on: connection)
        wroteAll = true
    }

    /// The worker's rows, merged into the stored ones in SQL.
    private func writeRows(on connection: Connection) throws(StoreError) {
        try rowWriter.merge(fine: worker.fine, versions: worker.byVersion, on: connection)
    }

    /// The sealed rows: those the worker prepared into its caches, whose parts then wait there
    /// for the next folds (``cacheReady``: every fine part, the seal's version parts); then those
    /// it could not prepare (``ExplorerWorker/sealed``), merged in SQL right after the cached rows
    /// of those parts, which the merge would otherwise miss (their watermarks move to the seal).
    /// The version rows of the other parts are still on the worker.
    private func writeSealed(_ seal: Seal, on connection: Connection) throws(StoreError) {
        for row in worker.prepared ?? [] {
            if row.level == .fine {
                fineCache[RollupParts.part(app: row.key.app, day: row.key.day, version: row.key.version)].append(row)
            } else {
                worker.versionCache[row.key] = row.cells
            }
        }
        let parts = [(RollupLevel.fine, Array(0..<RollupParts.count)), (.byVersion, seal.versionParts)]
        for (level, levelParts) in parts {
            for part in levelParts {
                if let index = cacheReady.firstIndex(where: { $0.level == level && $0.part == part }) {
                    cacheReady[index].through = seal.through
                } else {
                    cacheReady.append((level, part, seal.through, .now))
                }
            }
        }
        guard !worker.sealed.isEmpty else { return }
        let sealedRows = worker.sealed
        try writeCacheParts(Set(0..<RollupParts.count), of: .fine, on: connection)
        try writeCacheParts(Set(seal.versionParts), of: .byVersion, on: connection)
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
        held = through
        if let wroteBases {
            bases = wroteBases
            worker.fineWritten(wroteBases.fine)
        }
        let stored = bases ?? Self.uniform(through)
        if wroteAll {
            worker.fine = [:]
            worker.byVersion = [:]
            heldDocuments = 0
            heldSince = nil
            pendingSeals = []
        }
        if let lowest = (stored.fine + stored.version).min() {
            pendingSeals.removeAll { $0.through <= lowest }
        }
        if let sealedNow {
            self.sealedNow = nil
            sealed = sealedNow
            heldDocuments = 0
            heldSince = nil
            if sealedNow.documents > 0 {
                pendingSeals.append((sealedNow.through, sealedNow.documents))
                if versionPartSealedAt == nil { versionPartSealedAt = .now }
            }
            if let deferral, deferral.holdsVersions, !sealedNow.versionParts.isEmpty {
                nextVersionPart = (nextVersionPart + sealedNow.versionParts.count) % RollupParts.count
                versionPartSealedAt = .now
            }
            _ = worker.submitSealAndPrepare(bases: stored, through: through, versionParts: sealedNow.versionParts)
        }
        // Documents of seals whose rows are not all written count too (the sealed one among them).
        return heldDocuments + pendingSeals.reduce(0) { $0 + $1.documents }
    }
}
