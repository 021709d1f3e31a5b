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
    private(set) var diagnostics: [DiagnosticKey: Int64] = [:]

    init() {}

    /// `deltas` summed per cell of `level`.
    init(_ deltas: RollupDeltas, level: RollupLevel) {
        let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
        for usage in deltas.usage {
            let cell = project(usage.cell)
            metrics[cell, default: Metric()].payloads.addSaturating(usage.payloads)
            metrics[cell, default: Metric()].foreground += usage.foregroundMilliseconds
            metrics[cell, default: Metric()].background += usage.backgroundMilliseconds
        }
        for exit in deltas.exits {
            metrics[project(exit.cell), default: Metric()].exits.append(
                CountEntry(a: exit.state, b: exit.reason, count: exit.count))
        }
        for signpost in deltas.signposts {
            metrics[project(signpost.cell), default: Metric()].signposts.append(
                CountEntry(a: signpost.category, b: signpost.name, count: signpost.count))
        }
        metrics = metrics.mapValues { sums in
            var sums = sums
            sums.exits = RollupBlob.normalize(sums.exits)
            sums.signposts = RollupBlob.normalize(sums.signposts)
            return sums
        }
        var entries: [SourceCell: [BucketEntry]] = [:]
        for row in deltas.buckets {
            entries[SourceCell(cell: project(row.cell), source: row.source), default: []].append(
                BucketEntry(start: row.start, end: row.end, count: row.count))
        }
        buckets = entries.mapValues { RollupBlob.encode(RollupBlob.coarsen(RollupBlob.normalize($0))) }
        for row in deltas.diagnostics {
            diagnostics[
                DiagnosticKey(cell: project(row.cell), kind: row.kind, crashGroup: row.crashGroup), default: 0] +=
                1
        }
    }

    var isEmpty: Bool { metrics.isEmpty && buckets.isEmpty && diagnostics.isEmpty }

    /// Cells of the three kinds (what a write upserts).
    var count: Int { metrics.count + buckets.count + diagnostics.count }

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
            let merged = RollupBlob.merge(
                RollupBlob.decode(mine, as: BucketEntry.self), RollupBlob.decode(packed, as: BucketEntry.self))
            buckets[key] = RollupBlob.encode(RollupBlob.coarsen(merged))
        }
        for (key, count) in other.diagnostics { diagnostics[key, default: 0] += count }
    }
}
