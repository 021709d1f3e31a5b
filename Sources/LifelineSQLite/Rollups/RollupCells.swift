/// A ``RollupDeltas`` log summed per rollup cell of one level, as ``RollupFlusher`` writes it:
/// packed entry lists normalized (sorted, equal keys summed), bucket lists coarsened to
/// ``RollupBlob/maxBuckets`` and kept encoded (a version cell's list soon reaches 128 buckets on
/// a load where bounds differ: 3 KB as entries, ~400 bytes packed). Sums merge with one another
/// as `ll_merge_counts` and `ll_merge_buckets` merge stored blobs, so a level summed over several
/// folds in memory and written once holds what one write per fold would have stored (counts
/// exactly; past 128 buckets the coarsened bounds depend on the order of the merges, as they
/// already did from one batching of the folds to another).
struct RollupCells {
    /// A metric cell's increments.
    struct Metric {
        var payloads: Int64 = 0
        var foreground: Double = 0
        var background: Double = 0
        var exits: [CountEntry] = []
        var signposts: [CountEntry] = []

        mutating func add(_ usage: RollupDeltas.Usage) {
            payloads.addSaturating(usage.payloads)
            foreground += usage.foregroundMilliseconds
            background += usage.backgroundMilliseconds
        }
    }

    struct SourceCell: Hashable {
        var cell: RollupDeltas.Cell
        var source: Int64
    }

    struct DiagnosticKey: Hashable {
        var cell: RollupDeltas.Cell
        var kind: String
        var crashGroup: Int64
    }

    private(set) var metrics: [RollupDeltas.Cell: Metric] = [:]
    /// Packed (``RollupBlob/encode(_:)``) bucket lists.
    private(set) var buckets: [SourceCell: [UInt8]] = [:]
    /// Bucket lists of the fine level packed per cell (``BucketCell``, as `rollup_bucket_cells`
    /// stores them: ``finePacked(_:)``, instead of ``buckets``); `packedSources` counts their
    /// (cell, source) lists, an upper bound once cells merged.
    private(set) var bucketCells: [RollupDeltas.Cell: [UInt8]] = [:]
    private(set) var packedSources = 0
    private(set) var diagnostics: [DiagnosticKey: Int64] = [:]

    init() {}

    /// `deltas` summed per cell of `level`. A document's entries sit together in the log (a
    /// histogram's buckets one after another), so each run of equal keys is hashed once.
    init(_ deltas: RollupDeltas, level: RollupLevel) {
        self.init(counts: deltas, level: level)
        let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
        var entries: [SourceCell: [BucketEntry]] = [:]
        Self.runs(of: deltas.buckets, key: { SourceCell(cell: project($0.cell), source: $0.source) }) { key, run in
            entries[key, default: []].append(
                contentsOf: run.lazy.map { BucketEntry(start: $0.start, end: $0.end, count: $0.count) })
        }
        buckets = entries.mapValues { RollupBlob.encode(RollupBlob.coarsen(RollupBlob.normalize($0))) }
    }

    /// `deltas` summed per fine cell, the buckets packed per cell (what ``init(_:level:)`` at the
    /// fine level makes, its lists then grouped per cell and encoded by ``BucketCell``, without
    /// the dictionaries of one entry per cell and source: the fold's cache takes this at every
    /// fold). Each run of one cell's buckets is grouped by source in place; a cell met again later
    /// in the log is merged.
    static func finePacked(_ deltas: RollupDeltas) -> RollupCells {
        var cells = RollupCells(counts: deltas, level: .fine)
        var run: [RollupDeltas.Bucket] = []
        var lists: [(source: Int64, buckets: [UInt8])] = []
        runs(of: deltas.buckets, key: \.cell) { cell, bucketRun in
            run.removeAll(keepingCapacity: true)
            run.append(contentsOf: bucketRun)
            // Stable: a source's buckets keep their order (normalize sorts and sums them anyway).
            if !zip(run, run.dropFirst()).allSatisfy({ $0.source <= $1.source }) {
                run = run.enumerated().sorted { ($0.element.source, $0.offset) < ($1.element.source, $1.offset) }
                    .map(\.element)
            }
            lists.removeAll(keepingCapacity: true)
            runs(of: run, key: \.source) { source, sourceRun in
                let entries = sourceRun.map { BucketEntry(start: $0.start, end: $0.end, count: $0.count) }
                lists.append((source, RollupBlob.encode(RollupBlob.coarsen(RollupBlob.normalize(entries)))))
            }
            cells.packedSources += lists.count
            let blob = BucketCell.encode(lists)
            if let mine = cells.bucketCells[cell] {
                cells.bucketCells[cell] = mergeBucketCells(mine, blob)
            } else {
                cells.bucketCells[cell] = blob
            }
        }
        return cells
    }

    /// The usage, exit counts, signpost totals and diagnostics of `deltas` summed per cell of
    /// `level` (no buckets).
    private init(counts deltas: RollupDeltas, level: RollupLevel) {
        let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
        for usage in deltas.usage {
            metrics[project(usage.cell), default: Metric()].add(usage)
        }
        Self.runs(of: deltas.exits, key: { project($0.cell) }) { cell, run in
            metrics[cell, default: Metric()].exits.append(
                contentsOf: run.lazy.map { CountEntry(a: $0.state, b: $0.reason, count: $0.count) })
        }
        Self.runs(of: deltas.signposts, key: { project($0.cell) }) { cell, run in
            metrics[cell, default: Metric()].signposts.append(
                contentsOf: run.lazy.map { CountEntry(a: $0.category, b: $0.name, count: $0.count) })
        }
        // In place: no second dictionary, no copy of a cell's lists.
        for index in metrics.indices {
            metrics.values[index].exits = RollupBlob.normalize(metrics.values[index].exits)
            metrics.values[index].signposts = RollupBlob.normalize(metrics.values[index].signposts)
        }
        let diagnosticKey = { (row: RollupDeltas.Diagnostic) in
            DiagnosticKey(cell: project(row.cell), kind: row.kind, crashGroup: row.crashGroup)
        }
        Self.runs(of: deltas.diagnostics, key: diagnosticKey) { diagnostics[$0, default: 0] += Int64($1.count) }
    }

    /// Calls `body` once per run of consecutive `rows` of equal `key`, in order.
    private static func runs<Row, Key: Equatable>(
        of rows: [Row], key: (Row) -> Key, _ body: (Key, ArraySlice<Row>) -> Void
    ) {
        var start = rows.startIndex
        while start < rows.endIndex {
            let runKey = key(rows[start])
            var end = start + 1
            while end < rows.endIndex, key(rows[end]) == runKey { end += 1 }
            body(runKey, rows[start..<end])
            start = end
        }
    }

    var isEmpty: Bool { metrics.isEmpty && buckets.isEmpty && bucketCells.isEmpty && diagnostics.isEmpty }

    /// Cells of the three kinds, a cell's bucket lists one per source.
    var count: Int { metrics.count + buckets.count + packedSources + diagnostics.count }

    /// Adds `other`'s sums to these.
    mutating func merge(_ other: RollupCells) {
        for (cell, sums) in other.metrics {
            guard var mine = metrics[cell] else {
                metrics[cell] = sums
                continue
            }
            metrics[cell] = nil  // `mine` holds the only reference to its arrays while they merge
            mine.payloads.addSaturating(sums.payloads)
            mine.foreground += sums.foreground
            mine.background += sums.background
            mine.exits = RollupBlob.merge(mine.exits, sums.exits)
            mine.signposts = RollupBlob.merge(mine.signposts, sums.signposts)
            metrics[cell] = mine
        }
        for (key, packed) in other.buckets {
            guard let mine = buckets[key] else {
                buckets[key] = packed
                continue
            }
            buckets[key] = RollupCells.mergeBuckets(mine, packed)
        }
        for (cell, blob) in other.bucketCells {
            guard let mine = bucketCells[cell] else {
                bucketCells[cell] = blob
                continue
            }
            bucketCells[cell] = Self.mergeBucketCells(mine, blob)
        }
        packedSources += other.packedSources
        for (key, count) in other.diagnostics { diagnostics[key, default: 0] += count }
    }

    /// Two cells' ``BucketCell`` blobs merged (as `ll_merge_bucket_cells` merges them).
    static func mergeBucketCells(_ x: [UInt8], _ y: [UInt8]) -> [UInt8] {
        x.withUnsafeBytes { x in y.withUnsafeBytes { y in BucketCell.merge(x, y) } }
    }

    /// Two packed bucket lists merged (``RollupBlob/mergeBlobs(_:_:as:limit:finish:)``, coarsened
    /// to ``RollupBlob/maxBuckets``).
    static func mergeBuckets(_ x: [UInt8], _ y: [UInt8]) -> [UInt8] {
        x.withUnsafeBytes { x in
            y.withUnsafeBytes { y in
                RollupBlob.mergeBlobs(
                    x, y, as: BucketEntry.self, limit: RollupBlob.maxBuckets, finish: RollupBlob.coarsen)
            }
        }
    }
}

extension RollupCells {
    /// These cells in ``RollupParts/count`` parts, each row in the part ``RollupParts/part(_:)``
    /// gives it. ``packedSources`` (an upper bound used only to bound the cache) is shared out by
    /// each part's bucket cells.
    func parts() -> [RollupCells] {
        var parts = Array(repeating: RollupCells(), count: RollupParts.count)
        for (cell, sums) in metrics { parts[RollupParts.part(cell)].metrics[cell] = sums }
        for (key, packed) in buckets { parts[RollupParts.part(key.cell)].buckets[key] = packed }
        for (cell, blob) in bucketCells { parts[RollupParts.part(cell)].bucketCells[cell] = blob }
        for (key, count) in diagnostics { parts[RollupParts.part(key.cell)].diagnostics[key] = count }
        if packedSources > 0, !bucketCells.isEmpty {
            var left = packedSources
            for index in parts.indices {
                let share = packedSources * parts[index].bucketCells.count / bucketCells.count
                parts[index].packedSources = share
                left -= share
            }
            parts[0].packedSources += left
        }
        return parts
    }
}
