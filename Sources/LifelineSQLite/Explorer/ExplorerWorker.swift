import Foundation
import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// The thread that extracts each folded metric document's explorer observations and adds them to
/// the ``ExplorerStage``'s unwritten rows, beside the writer thread, which meanwhile goes on with
/// the fold's other stages and documents. Extraction and adds were ~45 % of the writer thread's
/// time on a fleet-like load (perf, BENCHMARKS.md): on two cores they now overlap the rest of the
/// fold instead of adding to it.
///
/// With a read connection, it also **prepares the writes** of rows the stage sealed
/// (``submitSealAndPrepare(bases:through:versionParts:)``): a thread of its own reads their stored
/// cells in a snapshot whose parts' watermarks are still the sealed rows' bases, merges them as
/// bytes with the sealed ones and hands back the finished rows, so the writer only replaces them
/// (the merge and the encoding were ~45 % of its time). The adds go on meanwhile: when the prepare ran between them, on the same thread, the
/// documents the writer handed over queued up behind it and the writer waited for room, 17 % of its
/// time on the reference load (waits of up to 65 ms, the p99's largest part; BENCHMARKS.md, "The
/// explorer's prepare on a thread of its own").
///
/// **Who touches the rows.** The writer hands documents over in fold order (``submit(_:)``); only
/// this thread reads or changes ``fine`` and ``byVersion`` until the writer calls ``drain()``,
/// which returns once every submitted job and the prepare are done; the writer reads, writes or
/// clears them only after a drain and before its next submit. ``sealed``, ``prepared`` and
/// ``versionCache`` belong to the workers from ``submitSealAndPrepare(bases:through:versionParts:)`` until
/// ``isPreparing`` turns false (or a drain): this thread seals (moves the rows to ``sealed``), then
/// only the prepare's thread touches them until it ends; then they are the writer's until its next
/// seal. No two threads touch the same rows at once (the condition's lock orders their memory).
/// That protocol is why the class is `@unchecked Sendable`.
final class ExplorerWorker: @unchecked Sendable {

    /// The rows not written yet, per level. See the class's comment for who may touch them.
    private var rows = ExplorerRowSet()
    var fine: [ExplorerRowKey: ExplorerPendingRow] {
        get { rows.fine }
        set { rows.fine = newValue }
    }
    var byVersion: [ExplorerRowKey: ExplorerPendingRow] {
        get { rows.byVersion }
        set { rows.byVersion = newValue }
    }
    /// Rows sealed for a write, and the writes of those prepared (``prepare(bases:through:)``):
    /// a prepared row leaves ``sealed``; those left there when the snapshot's `explorer_through`
    /// was not the sealed rows' base, a stored row did not read or a read failed are merged in SQL
    /// by the writer, as without a worker. `prepared` is `nil` until the prepare ends (and without
    /// a read connection).
    var sealed = SealedRows()
    var prepared: [PreparedRow]?
    /// Version-level rows prepared by a seal and not written yet (``ExplorerStage``): encoded,
    /// merged with their stored cells and every document of their part up to the seal that took
    /// it. A prepare merges sealed version rows into these instead of the stored ones; the writer
    /// puts the prepared ones here and writes them one part per fold. Touched by the prepare's thread during a prepare only, by the
    /// writer otherwise (as ``sealed`` and ``prepared``).
    var versionCache: [ExplorerRowKey: [UInt8]] = [:]
    /// The fine rows' keys of recent seals, each seal's with its end (the prepare's thread's
    /// alone): a seal's fine rows wait in the stage's cache (``ExplorerStage/fineCache``) until
    /// their part is written, and a later seal's row of the same key is prepared as it is, merged
    /// in SQL when written after it (``PreparedRow/mergesStored``), not merged with the stored row,
    /// which may not hold the cached one yet. A key counts until its part's watermark passes the
    /// seal (``fineWritten(_:)``), a seal's keys until every part's does: a superset of the
    /// cached keys, never fewer. A fleet's busy cells come back at every seal, each about a
    /// second after its parts were written: read and merged here, as before the parts.
    private var recentFine: [(through: Int64, keys: Set<ExplorerRowKey>)] = []
    /// The fine parts' watermarks as the writer last committed them (under the condition's lock).
    private var fineWrittenParts = Array(repeating: Int64(0), count: RollupParts.count)
    /// The app states' and categories' ids as the prepare's reader finds them (its thread's alone).
    private var states = ExplorerNameIDs.states()
    private var categories = ExplorerNameIDs.categories()

    private enum Job {
        case document(Document)
        case sealAndPrepare(bases: PartBases, through: Int64, versionParts: [Int])
        /// Rows this thread made, released here: freed by the writer, their memory went back to
        /// this thread's malloc arena under its lock, which this thread held meanwhile (`perf`
        /// showed the writer waiting there).
        case dispose(SealedRows, [PreparedRow]?)
        /// Sealed rows a prepare merged, released here as it goes on (see ``dispose``).
        case release([ExplorerPendingRow])
    }

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var busy = false
    private var stopping = false
    /// Rows held per level after the last job (read by the writer without a drain: bounds).
    private var rowCount = (fine: 0, byVersion: 0)
    /// Whether a prepare is queued or running.
    private var preparing = false
    /// A sealed prepare for the prepare's thread: the watermarks its snapshot must show.
    private var prepareRequest: (bases: PartBases, through: Int64)?
    /// The adding thread ended (stopped, its queue empty): the prepare's thread ends once it has
    /// no prepare left.
    private var addsEnded = false
    /// Called on the prepare's thread when a prepare ends (the writer is woken to write the rows).
    private let onPrepared: @Sendable () -> Void
    /// Reads the stored rows of a prepare (the prepare's thread only).
    private let reader: Connection?
    /// Fine rows a prepare reads before it may write the rest unread (``defaultFineProbe``).
    private let fineProbe: Int

    /// `reader`: a connection of the same database for ``submitSealAndPrepare(bases:through:versionParts:)``; without one
    /// (refold, offline folds) the stage writes its rows in SQL.
    /// `fineProbe`: see ``defaultFineProbe``.
    init(
        reader: Connection? = nil, fineProbe: Int = ExplorerWorker.defaultFineProbe,
        onPrepared: @escaping @Sendable () -> Void = {}
    ) {
        self.reader = reader
        self.fineProbe = max(0, fineProbe)
        self.onPrepared = onPrepared
        let thread = Thread { [self] in run() }
        thread.name = "lifeline-explorer"
        thread.start()
        if reader != nil {
            let preparer = Thread { [self] in runPrepares() }
            preparer.name = "lifeline-explorer-prepare"
            preparer.start()
        }
    }

    /// Documents queued at most: past it ``submit(_:)`` waits, so a worker slower than the writer
    /// (a load where every document makes rows of its own) slows the writer evenly instead of
    /// queueing decoded documents without bound.
    static let maxQueued = 64

    /// Hands one document over (the writer thread, in fold order); waits while ``maxQueued`` are
    /// queued.
    func submit(_ document: Document) {
        condition.lock()
        while queue.count >= Self.maxQueued { condition.wait() }
        queue.append(.document(document))
        condition.broadcast()
        condition.unlock()
    }

    /// Once the documents submitted before are added, seals the rows (they become ``sealed``,
    /// and the rows start empty) and prepares their write on a snapshot whose parts' watermarks
    /// must be `bases` (the fine ones possibly moved by the writer's part writes, up to the seal's
    /// end, `through`). `versionParts`: the
    /// version rows of these parts (``RollupParts``) are sealed too; the others stay in
    /// ``byVersion``, gathering the next documents (a version row is touched by most seals, for a
    /// document or two each, and merging it into its bytes at every seal was most of a prepare;
    /// sealed all at once, ~16,000 of them on the iOS 27 load made one prepare the writer waited
    /// for). Returns `false` without a read connection.
    func submitSealAndPrepare(bases: PartBases, through: Int64, versionParts: [Int]) -> Bool {
        guard reader != nil else { return false }
        condition.lock()
        preparing = true
        condition.unlock()
        enqueue(.sealAndPrepare(bases: bases, through: through, versionParts: versionParts))
        return true
    }

    /// The writer committed the fine parts' watermarks `parts`: each part's rows of the seals up
    /// to its watermark are stored.
    func fineWritten(_ parts: [Int64]) {
        condition.lock()
        fineWrittenParts = parts
        condition.unlock()
    }

    /// Waits until no prepare is queued or running (documents may still be).
    func awaitPrepared() {
        condition.lock()
        while preparing { condition.wait() }
        condition.unlock()
    }

    /// Whether a prepare is queued or running: until it ends, only the workers touch ``sealed``
    /// and ``prepared``; after it, only the writer, until its next
    /// ``submitSealAndPrepare(bases:through:versionParts:)``.
    var isPreparing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return preparing
    }

    /// Releases `rows` and `prepared` (the sealed rows once written) on this thread.
    func dispose(_ rows: SealedRows, _ prepared: [PreparedRow]?) {
        enqueue(.dispose(rows, prepared))
    }

    /// Whether this worker can prepare writes (it has a read connection).
    var canPrepare: Bool { reader != nil }

    /// The fine rows held when the last job ended.
    var heldRows: Int {
        condition.lock()
        defer { condition.unlock() }
        return rowCount.fine
    }

    /// The version rows held (not sealed) when the last job ended.
    var heldVersionRows: Int {
        condition.lock()
        defer { condition.unlock() }
        return rowCount.byVersion
    }

    private func enqueue(_ job: Job) {
        condition.lock()
        queue.append(job)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every submitted document is added to the rows and no prepare is queued or
    /// running.
    func drain() {
        condition.lock()
        while busy || !queue.isEmpty || preparing { condition.wait() }
        condition.unlock()
    }

    /// Ends the threads once the documents submitted so far are added and the prepare asked for
    /// (if any) is done.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        var jobs: [Job] = []
        while true {
            condition.lock()
            while queue.isEmpty, !stopping { condition.wait() }
            if queue.isEmpty {
                addsEnded = true
                condition.broadcast()
                condition.unlock()
                return
            }
            swap(&jobs, &queue)
            busy = true
            condition.broadcast()  // a submit waiting for room
            condition.unlock()
            for job in jobs {
                switch job {
                case .document(let document): rows.add(document)
                case .sealAndPrepare(let bases, let through, let versionParts):
                    // Sealed here, in the documents' order; prepared on the other thread while
                    // this one adds the next documents to new rows.
                    sealed = SealedRows(fine: fine, byVersion: rows.takeVersionRows(of: versionParts))
                    // The next rows start with room for as many (grown from empty, their
                    // dictionary was resized a dozen times per seal: 8 % of this thread's time on
                    // the iOS 27 load).
                    fine = Dictionary(minimumCapacity: sealed.fine.count)
                    condition.lock()
                    prepareRequest = (bases, through)
                    condition.broadcast()
                    condition.unlock()
                case .dispose, .release: break
                }
            }
            jobs.removeAll(keepingCapacity: true)
            condition.lock()
            busy = false
            rowCount = (rows.fine.count, rows.byVersion.count)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The prepare's thread: one sealed prepare at a time, as ``run()`` hands them over.
    private func runPrepares() {
        while true {
            condition.lock()
            while prepareRequest == nil, !addsEnded { condition.wait() }
            guard let request = prepareRequest else {
                condition.unlock()
                reader?.close()
                return
            }
            prepareRequest = nil
            condition.unlock()
            prepared = prepare(bases: request.bases, through: request.through)
            condition.lock()
            preparing = false
            condition.broadcast()
            condition.unlock()
            onPrepared()
        }
    }

    /// The sealed rows merged with their stored cells (a version row's kept in ``versionCache``
    /// when it is there), read in one snapshot whose version parts' watermarks are
    /// `bases.version` and fine parts' between `bases.fine` and `through` (what the writer will
    /// still find when it writes them: only it and a refold, which moves those watermarks, write
    /// these rows). A fine row whose key an earlier seal may still hold in the stage's cache
    /// (``recentFine``) is not merged: written as it is, merged in SQL after the cached one. Each sealed
    /// row leaves ``sealed`` once merged, and goes back to the adding thread to be freed in
    /// batches as the prepare goes on (the rows added meanwhile reuse its memory). The rows it
    /// could not prepare stay in ``sealed``, for the writer's SQL merge: all of them when the
    /// snapshot's watermarks are not as above; from the first stored row that does not read, or
    /// the first failed read, on (none prepared when the snapshot could not begin). Past
    /// ``fineProbe`` fine rows, when few of them were stored, the rest go unread
    /// (``PreparedRow/mergesStored``). `nil` without a read connection.
    private func prepare(bases: PartBases, through: Int64) -> [PreparedRow]? {
        guard let reader else { return nil }
        var written: [PreparedRow] = []
        var spent: [ExplorerPendingRow] = []
        defer { if !spent.isEmpty { enqueue(.release(spent)) } }
        func release(_ row: ExplorerPendingRow) {
            spent.append(row)
            if spent.count == Self.releaseBatch {
                enqueue(.release(spent))
                spent = []
            }
        }
        // The parts written before the snapshot begins (a part written after it counts as cached:
        // its stored rows are not read from a snapshot that misses them).
        condition.lock()
        let writtenParts = fineWrittenParts
        condition.unlock()
        do throws(StoreError) {
            try reader.execute("BEGIN")
            defer { reader.rollbackQuietly() }
            // The writer may have written cached fine parts since the seal (up to it at most).
            let stored = try ExplorerStage.storedWatermarks(on: reader).parts
            guard zip(stored.fine, bases.fine).allSatisfy({ $0.1 <= $0.0 && $0.0 <= through }),
                stored.version == bases.version
            else { return [] }
            let writtenThrough = writtenParts.min() ?? 0
            recentFine.removeAll { $0.through <= writtenThrough }
            var sealedKeys = Set<ExplorerRowKey>(minimumCapacity: sealed.fine.count)
            defer { recentFine.append((through, sealedKeys)) }
            var probe = (read: 0, found: 0)
            for level in [RollupLevel.fine, .byVersion] {
                while let (key, pending) = level == .fine ? sealed.fine.popFirst() : sealed.byVersion.popFirst() {
                    func putBack() {
                        if level == .fine { sealed.fine[key] = pending } else { sealed.byVersion[key] = pending }
                    }
                    // The cells are made here, merged and freed on this thread; a row written
                    // without its stored cells is encoded as new (a payload's samples straight from
                    // their bytes where they apply: ``ExplorerPendingRow/encodedAlone(category:)``).
                    func asNew(mergesStored: Bool = false) -> PreparedRow? {
                        (try? pending.encoded(for: key)).map {
                            PreparedRow(level: level, key: key, cells: $0, mergesStored: mergesStored)
                        }
                    }
                    if level == .fine {
                        sealedKeys.insert(key)
                        let part = RollupParts.part(app: key.app, day: key.day, version: key.version)
                        // A fine row an earlier seal may still have cached is merged in SQL after it.
                        let cached = recentFine.contains { $0.through > writtenParts[part] && $0.keys.contains(key) }
                        if cached || (probe.read >= fineProbe && probe.found <= Self.fineProbeFound) {
                            guard let row = asNew(mergesStored: true) else {
                                putBack()
                                return written
                            }
                            written.append(row)
                            release(pending)
                            continue
                        }
                    }
                    var stored = level == .byVersion ? versionCache[key] : nil
                    do throws(StoreError) {
                        if stored == nil { stored = try storedRow(key, level, on: reader) }
                    } catch {
                        putBack()
                        throw error
                    }
                    if level == .fine {
                        probe.read += 1
                        if stored != nil { probe.found += 1 }
                    }
                    let made =
                        if let stored {
                            (try? pending.builder(for: key)).flatMap { Self.row(level, key, $0, merging: stored) }
                        } else {
                            asNew()
                        }
                    guard let row = made else {
                        putBack()
                        return written
                    }
                    written.append(row)
                    release(pending)
                }
            }
            return written
        } catch {
            return written
        }
    }

    /// `key`'s stored cells at `level`, if any (a state or category without an id has no stored row).
    private func storedRow(_ key: ExplorerRowKey, _ level: RollupLevel, on reader: Connection) throws(StoreError)
        -> [UInt8]?
    {
        guard let state = try states.id(of: key.appState, on: reader),
            let category = try categories.id(of: key.category, on: reader)
        else { return nil }
        let bindings = key.bindings(level, state: state, category: category)
        return try reader.first(level.selectExplorer, bindings) { $0.blob(0) }
    }
}
