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
/// payload on the reference load. The sums are merged in memory, in ``RollupParts/count`` parts
/// per level (migration 0025), and a part is written every ``Deferral/maxAge``, past
/// ``Deferral/maxCells`` of all of them, and every part whenever a fold must write everything (a
/// reader waits, the writer stops). A busy writer writes one part per fold: a whole level at once
/// (the version level's ~9,400 rows: 46–72 ms) held the door's batches back that long. A part's
/// documents are those above its watermark (`rollup_watermarks`; `aggregation_state
/// .rollup_fine_through` and `rollup_version_through` keep the lowest of each level's) up to
/// `folded_through`; when the caches are lost (a crash, a failed fold, another process writing
/// the rows) those documents are read again from their raw copies into the parts that miss them
/// (``begin(watermarks:foldedThrough:through:write:catchUp:)``).
final class RollupStage: ItemWriteStage {
    /// When the cached cells are written.
    struct Deferral {
        /// Age of the first cached document at most: what a crash replays is bounded by it.
        var maxAge: Duration = .seconds(2)
        /// Cached cells (metrics, buckets and diagnostics) at most.
        var maxCells = 32_768
        /// Explorer rows written by a fold past which its part write waits for the next fold
        /// (``yieldsTo``), unless the part is this late (or the cells past ``maxCells``).
        var yieldRows = 1_024
        var yieldLateness: Duration = .seconds(1)
    }

    /// The explorer stage whose long writes this stage's part write (when not forced) yields to:
    /// a fold that wrote thousands of explorer rows (10–15 ms on the reference load) and a part
    /// (5–15 ms) held the door's next batch back for both; the part waits a fold instead.
    weak var yieldsTo: ExplorerStage?

    /// The lowest watermark of each level's parts.
    static let readWatermarks = "SELECT rollup_fine_through, rollup_version_through FROM aggregation_state WHERE id = 1"
    static let writeLevelWatermarks =
        "UPDATE aggregation_state SET rollup_fine_through = ?, rollup_version_through = ? WHERE id = 1"
    /// Each part's watermark (level 0 the fine level, 1 the version level).
    static let readPartWatermarks = "SELECT level, part, through FROM rollup_watermarks"
    static let writePartWatermark = """
        INSERT INTO rollup_watermarks (level, part, through) VALUES (?, ?, ?)
        ON CONFLICT (level, part) DO UPDATE SET through = excluded.through
        """

    /// Scalar metric names of the app time summed into `rollup_metrics`.
    static let foregroundTime = "applicationTimeMetrics.cumulativeForegroundTime"
    static let backgroundTime = "applicationTimeMetrics.cumulativeBackgroundTime"

    static let selectDiagnostics = """
        SELECT kind, app_version, os_version, device_type, occurred_at, crash_group
        FROM diagnostics WHERE payload = ? ORDER BY ordinal
        """

    let deferral: Deferral?
    private var deltas = RollupDeltas()

    /// One part's cache: the sums of the documents above `base` (the stored watermark of the part)
    /// up to `cachedThrough`, how many documents that is, and when the first came.
    private struct Level {
        var cells = RollupCells()
        var base: Int64 = 0
        var documents = 0
        var since: ContinuousClock.Instant?

        init(base: Int64 = 0) { self.base = base }

        var holds: Bool { documents > 0 || !cells.isEmpty }

        /// When this part falls due by age; nil while it holds nothing.
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

    /// Every part's cache: the fine level's ``RollupParts/count`` first, then the version level's
    /// (``index(_:part:)``).
    private var parts = Array(repeating: Level(), count: 2 * RollupParts.count)
    /// Where the caches end; nil when nothing valid is kept (at start, after a failure).
    private var cachedThrough: Int64?
    /// The current fold: where it ends, whether it writes every part, which parts its transaction
    /// wrote (moving their watermarks to `foldThrough`), its documents.
    private var foldThrough: Int64?
    private var forceWrite = false
    private var written: [Int] = []
    private var foldDocuments = 0

    /// The position of `part` of `level` in ``parts`` (and in the watermarks of ``begin``).
    static func index(_ level: RollupLevel, part: Int) -> Int {
        (level == .fine ? 0 : RollupParts.count) + part
    }

    /// The level and part at `index`, and the level's number in `rollup_watermarks`.
    static func place(_ index: Int) -> (level: RollupLevel, part: Int, number: Int64) {
        index < RollupParts.count ? (.fine, index, 0) : (.byVersion, index - RollupParts.count, 1)
    }

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
        written = []
    }

    /// Whether cells are cached unwritten.
    var holdsCache: Bool { parts.contains { $0.holds } }

    /// When cached cells fall due by age (their count is checked at each fold).
    var dueAt: ContinuousClock.Instant? {
        guard let deferral else { return nil }
        return parts.compactMap { $0.dueAt(after: deferral.maxAge) }.min()
    }

    /// A fold begins (in its transaction) over the stored watermarks of every part (`watermarks`,
    /// ordered as ``index(_:part:)``, each ≤ `foldedThrough`). Caches that do not sit on them or do
    /// not reach `foldedThrough` are dropped, and the documents above each watermark are read
    /// again into the parts it stands for: one replay per range between two watermarks (`catchUp`
    /// hands the range's ids to the fold, which replays them through ``write(_:in:)`` and
    /// ``requestReleased()``), added to every part whose watermark is at or below the range's
    /// start. `through` is where this fold will end; `write` forces every part out.
    func begin(
        watermarks: [Int64], foldedThrough: Int64, through: Int64, write: Bool,
        catchUp: (_ from: Int64, _ through: Int64) throws(StoreError) -> Void
    ) throws(StoreError) {
        foldThrough = through
        forceWrite = write || deferral == nil
        written = []
        foldDocuments = 0
        if cachedThrough == foldedThrough, parts.map(\.base) == watermarks { return }
        guard watermarks.count == parts.count else {
            throw StoreError(.internal, "internal storage error", cause: "rollup watermarks: \(watermarks.count) parts")
        }
        dropCache()
        cachedThrough = foldedThrough
        for index in parts.indices { parts[index].base = watermarks[index] }
        let starts = Set(watermarks.filter { $0 < foldedThrough }).sorted()
        for (position, from) in starts.enumerated() {
            try catchUp(from, position + 1 < starts.count ? starts[position + 1] : foldedThrough)
            // At least one: a part's watermark must move even when no replayed document reads.
            add(deltas, documents: max(1, foldDocuments)) { watermarks[$0] <= from }
            deltas.clear()
            foldDocuments = 0
        }
    }

    /// Adds `deltas` summed per cell of both levels to the parts `receives` accepts.
    private func add(_ deltas: RollupDeltas, documents: Int, to receives: (Int) -> Bool) {
        for level in RollupLevel.allCases {
            let indices = (0..<RollupParts.count).map { Self.index(level, part: $0) }
            guard indices.contains(where: receives) else { continue }
            let cells = level == .fine ? RollupCells.finePacked(deltas) : RollupCells(deltas, level: .byVersion)
            for (index, part) in zip(indices, cells.parts()) where receives(index) {
                parts[index].add(part, documents: documents)
            }
        }
    }

    /// Adds the fold's cells to the caches. When forced (a reader waits, the writer stops, no
    /// deferral) every part is written; otherwise at most one per fold (``due()``): while the door
    /// is busy, short writes a few folds apart hold its batches back less than one of a whole
    /// level. A written part's watermark moves to this fold's end, and each level's lowest with
    /// it. A fold that did not begin (``BatchWriter/foldAgain(_:)``, each chunk of a refold, after
    /// the caches were written) writes both levels at once.
    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { deltas.clear() }
        guard let through = foldThrough else { return try RollupFlusher.flush(deltas, on: connection) }
        if !deltas.isEmpty || foldDocuments > 0 { add(deltas, documents: foldDocuments) { _ in true } }
        var due = forceWrite ? Array(parts.indices) : due()
        guard !due.isEmpty else { return }
        // Parts whose documents made no cells of theirs cost only their watermark: moved with it.
        due += parts.indices.filter { !due.contains($0) && parts[$0].documents > 0 && parts[$0].cells.isEmpty }
        for index in due {
            let place = Self.place(index)
            try RollupFlusher.write(parts[index].cells, level: place.level, on: connection)
            try connection.run(
                Self.writePartWatermark, [.integer(place.number), .integer(Int64(place.part)), .integer(through)])
        }
        written = due
        let after = parts.indices.map { due.contains($0) ? through : parts[$0].base }
        try connection.run(
            Self.writeLevelWatermarks,
            [
                .integer(after[..<RollupParts.count].min() ?? through),
                .integer(after[RollupParts.count...].min() ?? through),
            ])
    }

    /// The part this fold writes when not forced, if any: the one due first by age (unless it
    /// yields to the explorer's rows, ``yieldsTo``), or, past ``Deferral/maxCells`` cached in all,
    /// that one or the largest.
    private func due() -> [Int] {
        guard let deferral else { return Array(parts.indices) }
        let now = ContinuousClock.now
        let yielding = (yieldsTo?.rowWriter.rowsWritten ?? 0) >= deferral.yieldRows
        var oldest: (index: Int, at: ContinuousClock.Instant)?
        var cells = 0
        var largest = 0
        for index in parts.indices {
            cells += parts[index].cells.count
            if parts[index].cells.count > parts[largest].cells.count { largest = index }
            guard let at = parts[index].dueAt(after: deferral.maxAge), at <= now else { continue }
            if oldest.map({ at < $0.at }) ?? true { oldest = (index, at) }
        }
        if cells >= deferral.maxCells { return [oldest?.index ?? largest] }
        guard let oldest, !yielding || oldest.at + deferral.yieldLateness <= now else { return [] }
        return [oldest.index]
    }

    /// The fold committed: a written part is emptied, the rest is kept up to the fold's end.
    /// Returns the documents whose cells are cached in any part (0: all are stored).
    @discardableResult
    func committed() -> Int {
        guard let through = foldThrough else {
            dropCache()
            return 0
        }
        foldThrough = nil
        for index in written { parts[index] = Level(base: through) }
        written = []
        cachedThrough = through
        return holdsCache ? max(1, parts.map(\.documents).max() ?? 0) : 0
    }

    private func dropCache() {
        parts = Array(repeating: Level(), count: 2 * RollupParts.count)
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
