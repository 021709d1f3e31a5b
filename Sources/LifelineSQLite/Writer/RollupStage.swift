import LifelineModel
import LifelineStorage

/// Folds each document into the rollup tables of both levels.
///
/// Each document's increments are logged in memory (``RollupDeltas``), kept or dropped with its
/// savepoint, and the fold's sum (``RollupCells``) is upserted once just before COMMIT: documents
/// of a fold sharing a rollup key cost one upsert together. The rules mirror the normalized rows
/// (and ``RollupRebuilder``) exactly: exit counts > 0; signpost totals clamped at 0, zero totals
/// kept; the first histogram per metric name and the first duration histogram per signpost;
/// buckets with a positive count and a finite bound; diagnostics as stored.
///
/// **Both levels' cells stay in memory between writes** (with a ``Deferral``: the server's
/// writer). A version-day cell gathers every OS and device of its version and day: most folds
/// touch it, for a document or two each, and rewriting its packed blobs at each was a fifth of
/// what the server wrote. A fine cell is touched less often, but a fold's few dozen fine upserts
/// land on as many pages all over each day's part of the tables: 30 of the ~77 KB written per
/// payload on the reference load. The sums of both levels are merged in memory, each level's
/// written every ``Deferral/maxAge`` (one level per fold, so that two shorter writes hold the
/// door back instead of one longer one), past ``Deferral/maxCells`` of both, and both whenever a
/// fold must write everything (a reader waits, the writer stops). Their documents
/// are those above `aggregation_state.rollup_fine_through` and `rollup_version_through`
/// (migrations 0024 and 0020, each moved when its level's cache is written) up to `folded_through`;
/// when the caches are lost (a crash, a failed fold, another process writing the rows) those
/// documents are read again from their raw copies into the levels that miss them
/// (``begin(fineThrough:versionThrough:foldedThrough:through:write:catchUp:)``).
final class RollupStage: ItemWriteStage {
    /// When the cached cells are written.
    struct Deferral {
        /// Age of the first cached document at most: what a crash replays is bounded by it.
        var maxAge: Duration = .seconds(2)
        /// Cached cells (metrics, buckets and diagnostics) at most.
        var maxCells = 32_768
    }

    static let readWatermarks = "SELECT rollup_fine_through, rollup_version_through FROM aggregation_state WHERE id = 1"
    static let writeFineWatermark = "UPDATE aggregation_state SET rollup_fine_through = ? WHERE id = 1"
    static let writeVersionWatermark = "UPDATE aggregation_state SET rollup_version_through = ? WHERE id = 1"

    /// Scalar metric names of the app time summed into `rollup_metrics`.
    static let foregroundTime = "applicationTimeMetrics.cumulativeForegroundTime"
    static let backgroundTime = "applicationTimeMetrics.cumulativeBackgroundTime"

    static let selectDiagnostics = """
        SELECT kind, app_version, os_version, device_type, occurred_at, crash_group
        FROM diagnostics WHERE payload = ? ORDER BY ordinal
        """

    let deferral: Deferral?
    private var deltas = RollupDeltas()

    /// One level's cache: the sums of the documents above `base` (the stored watermark they sit
    /// on: `rollup_fine_through` or `rollup_version_through`) up to `cachedThrough`, how many
    /// documents that is, and when the first came.
    private struct Level {
        var cells = RollupCells()
        var base: Int64 = 0
        var documents = 0
        var since: ContinuousClock.Instant?

        init(base: Int64 = 0) { self.base = base }

        var holds: Bool { documents > 0 || !cells.isEmpty }

        /// When this level falls due by age; nil while it holds nothing.
        func dueAt(after maxAge: Duration) -> ContinuousClock.Instant? {
            holds ? since.map { $0 + maxAge } : nil
        }

        mutating func add(_ new: RollupCells, documents count: Int) {
            if cells.isEmpty {
                cells = new
            } else {
                cells.merge(new)
            }
            documents += count
            if since == nil, count > 0 || !new.isEmpty { since = .now }
        }
    }

    private var fine = Level()
    private var version = Level()
    /// Where both caches end; nil when nothing valid is kept (at start, after a failure).
    private var cachedThrough: Int64?
    /// The current fold: where it ends, whether it writes both caches, which of them its
    /// transaction wrote (moving their watermarks to `foldThrough`), its documents.
    private var foldThrough: Int64?
    private var forceWrite = false
    private var wroteFine = false
    private var wroteVersion = false
    private var foldDocuments = 0

    init(deferral: Deferral? = nil) {
        self.deferral = deferral
    }

    private struct SignpostKey: Hashable {
        var category: Int64
        var name: Int64
    }

    /// The metric_names key of a signpost's duration histogram (see `HistogramSource.storageKey`).
    static func signpostSource(category: String, name: String) -> String { "signpost:\(category)/\(name)" }

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        switch stored.item.document.content {
        case .metric(let metric): try write(metric, stored: stored, in: session)
        case .diagnostic: try writeDiagnostics(payload: stored.payloadID, app: stored.appID, on: session.connection)
        }
    }

    func requestReleased() {
        deltas.release()
        foldDocuments += 1
    }

    func requestRolledBack() { deltas.rollback() }

    /// The fold did not commit: the caches may include its documents, so they are dropped and
    /// rebuilt from the raw copies at the next fold.
    func batchAborted() {
        deltas.clear()
        dropCache()
        foldThrough = nil
    }

    /// Whether cells are cached unwritten.
    var holdsCache: Bool { fine.holds || version.holds }

    /// When cached cells fall due by age (their count is checked at each fold).
    var dueAt: ContinuousClock.Instant? {
        guard let deferral else { return nil }
        return [fine, version].compactMap { $0.dueAt(after: deferral.maxAge) }.min()
    }

    /// A fold begins (in its transaction) over the stored watermarks (`rollup_fine_through` and
    /// `rollup_version_through`, each ≤ `folded_through`). Caches that do not sit on them or do
    /// not reach `foldedThrough` are dropped, and the documents above each watermark are read
    /// again into the level it stands for (`catchUp` hands their ids to the fold, which replays
    /// them through ``write(_:in:)`` and ``requestReleased()``; once for both levels when the
    /// watermarks are equal). `through` is where this fold will end; `write` forces both caches
    /// out.
    func begin(
        fineThrough: Int64, versionThrough: Int64, foldedThrough: Int64, through: Int64, write: Bool,
        catchUp: (_ from: Int64, _ through: Int64) throws(StoreError) -> Void
    ) throws(StoreError) {
        foldThrough = through
        forceWrite = write || deferral == nil
        wroteFine = false
        wroteVersion = false
        foldDocuments = 0
        if cachedThrough == foldedThrough, fine.base == fineThrough, version.base == versionThrough { return }
        dropCache()
        cachedThrough = foldedThrough
        fine.base = fineThrough
        version.base = versionThrough
        for (from, levels) in Self.replays(fine: fineThrough, version: versionThrough, folded: foldedThrough) {
            try catchUp(from, foldedThrough)
            // At least one: the level's watermark must move even when no replayed document reads.
            let documents = max(1, foldDocuments)
            if levels.contains(.fine) { fine.add(RollupCells.finePacked(deltas), documents: documents) }
            if levels.contains(.byVersion) {
                version.add(RollupCells(deltas, level: .byVersion), documents: documents)
            }
            deltas.clear()
            foldDocuments = 0
        }
    }

    /// The replays a fold begins with: from each watermark below `folded`, the levels it misses.
    private static func replays(fine: Int64, version: Int64, folded: Int64) -> [(from: Int64, levels: [RollupLevel])] {
        if fine == version { return fine < folded ? [(fine, [.fine, .byVersion])] : [] }
        return [(fine, [RollupLevel.fine]), (version, [.byVersion])].filter { $0.from < folded }
    }

    /// Adds the fold's cells of both levels to the caches. When forced (a reader waits, the
    /// writer stops, no deferral) both are written; otherwise at most one per fold, the one due
    /// first by age (or the larger past ``Deferral/maxCells``): while the door is busy, two
    /// shorter writes a few folds apart hold its batches back less than one of both levels. A
    /// written level's watermark moves to this fold's end. A fold that did not begin
    /// (``BatchWriter/foldAgain(_:)``, each chunk of a refold, after the caches were written)
    /// writes both levels at once.
    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { deltas.clear() }
        guard let through = foldThrough else { return try RollupFlusher.flush(deltas, on: connection) }
        if !deltas.isEmpty || foldDocuments > 0 {
            fine.add(RollupCells.finePacked(deltas), documents: foldDocuments)
            version.add(RollupCells(deltas, level: .byVersion), documents: foldDocuments)
        }
        let (writeFine, writeVersion) = forceWrite ? (true, true) : due()
        if writeFine {
            try RollupFlusher.write(fine.cells, level: .fine, on: connection)
            try connection.run(Self.writeFineWatermark, [.integer(through)])
            wroteFine = true
        }
        if writeVersion {
            try RollupFlusher.write(version.cells, level: .byVersion, on: connection)
            try connection.run(Self.writeVersionWatermark, [.integer(through)])
            wroteVersion = true
        }
    }

    /// Which cache this fold writes when not forced: at most one.
    private func due() -> (fine: Bool, version: Bool) {
        guard let deferral else { return (true, true) }
        let now = ContinuousClock.now
        func byAge(_ level: Level) -> ContinuousClock.Instant? {
            level.dueAt(after: deferral.maxAge).flatMap { $0 <= now ? $0 : nil }
        }
        switch (byAge(fine), byAge(version)) {
        case (let f?, let v?): return f <= v ? (true, false) : (false, true)
        case (.some, nil): return (true, false)
        case (nil, .some): return (false, true)
        case (nil, nil):
            guard fine.cells.count + version.cells.count >= deferral.maxCells else { return (false, false) }
            return fine.cells.count >= version.cells.count ? (true, false) : (false, true)
        }
    }

    /// The fold committed: a written cache is emptied, the rest is kept up to the fold's end.
    /// Returns the documents whose cells are cached in either level (0: all are stored).
    @discardableResult
    func committed() -> Int {
        guard let through = foldThrough else {
            dropCache()
            return 0
        }
        foldThrough = nil
        if wroteFine { fine = Level(base: through) }
        if wroteVersion { version = Level(base: through) }
        cachedThrough = through
        return holdsCache ? max(1, fine.documents, version.documents) : 0
    }

    private func dropCache() {
        fine = Level()
        version = Level()
        cachedThrough = nil
    }

    private func write(_ metric: MetricPayload, stored: StoredItem, in session: WriteSession) throws(StoreError) {
        let meta = metric.meta
        let cell = RollupDeltas.Cell(
            app: stored.appID, day: RollupDeltas.day(epochSeconds: stored.occurredAt),
            version: try session.id(.appVersion, meta.appVersion) ?? 0,
            os: try session.id(.osVersion, meta.osVersion) ?? 0,
            device: try session.id(.deviceType, meta.deviceType) ?? 0)
        let foreground = metric.scalars.first { $0.name == Self.foregroundTime }?.measurement.finiteValue
        let background = metric.scalars.first { $0.name == Self.backgroundTime }?.measurement.finiteValue
        deltas.append(
            RollupDeltas.Usage(
                // A 2.0.0 zero-length report (the disk-space snapshot) is not a device-day.
                cell: cell, payloads: metric.isDeviceDay ? 1 : 0, foregroundMilliseconds: foreground ?? 0,
                backgroundMilliseconds: background ?? 0))
        for exit in metric.exits where exit.count > 0 {
            guard let reason = try session.id(.exitReason, exit.reason) else { continue }
            deltas.append(
                RollupDeltas.Exit(
                    cell: cell, state: exit.state == .foreground ? 0 : 1, reason: reason, count: exit.count))
        }
        var seenSignposts = Set<SignpostKey>()
        for signpost in metric.signposts {
            guard let category = try session.id(.signpostCategory, signpost.category),
                let name = try session.id(.signpostName, signpost.name)
            else { continue }
            deltas.append(
                RollupDeltas.Signpost(cell: cell, category: category, name: name, count: max(0, signpost.totalCount)))
            guard seenSignposts.insert(SignpostKey(category: category, name: name)).inserted,
                let durations = signpost.durations,
                let source = try session.id(
                    .metricName, Self.signpostSource(category: signpost.category, name: signpost.name))
            else { continue }
            for bucket in durations.buckets {
                deltas.appendBucket(
                    cell: cell, source: source, start: bucket.start, end: bucket.end, count: bucket.count)
            }
        }
        var seenMetrics = Set<Int64>()
        for named in metric.histograms {
            guard let source = try session.id(.metricName, named.name), seenMetrics.insert(source).inserted else {
                continue
            }
            for bucket in named.histogram.buckets {
                deltas.appendBucket(
                    cell: cell, source: source, start: bucket.start, end: bucket.end, count: bucket.count)
            }
        }
    }

    /// Reads back the diagnostics of diagnostic payload `payload` of app `app` (their own
    /// dimensions and crash group; written by ``DiagnosticRowsStage`` before this stage, or stored
    /// when a fold is replayed: no raw copy to decode).
    func writeDiagnostics(payload: Int64, app: Int64, on connection: Connection) throws(StoreError) {
        let rows = try connection.query(Self.selectDiagnostics, [.integer(payload)]) { row in
            RollupDeltas.Diagnostic(
                cell: RollupDeltas.Cell(
                    app: app, day: RollupDeltas.day(epochSeconds: row.int64(4)), version: row.int64(1),
                    os: row.int64(2), device: row.int64(3)),
                kind: row.text(0), crashGroup: row.int64(5))
        }
        for row in rows { deltas.append(row) }
    }
}
