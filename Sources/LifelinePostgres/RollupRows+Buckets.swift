import LifelineAnalysis
import LifelineModel
import PostgresNIO

extension RollupRows {
    /// One cell's histogram source: its buckets sorted by (start, end), one per bound (`bucket_cells`
    /// holds them as three arrays).
    struct BucketArrays {
        var buckets: [BucketDistribution.Bucket] = []

        init(buckets: [BucketDistribution.Bucket] = []) { self.buckets = buckets }

        init(starts: [Double], ends: [Double], counts: [Int64]) {
            buckets = zip(zip(starts, ends), counts).map {
                BucketDistribution.Bucket(start: $0.0, end: $0.1, count: $1)
            }
        }

        /// The union of two such lists: counts of equal bounds summed (saturating), the other
        /// buckets kept in order, none merged with a neighbour (``ExplorerCell/mergeBuckets(_:_:)``).
        func merged(with other: BucketArrays) -> BucketArrays {
            BucketArrays(buckets: ExplorerCell.mergeBuckets(buckets, other.buckets))
        }

        mutating func append(_ start: Double, _ end: Double, _ count: Int64) {
            buckets.append(BucketDistribution.Bucket(start: start, end: end, count: count))
        }
    }

    /// One cell's histogram sources and their buckets (`bucket_cells` holds them as one row:
    /// migration postgres/0019).
    typealias CellBuckets = [String: BucketArrays]

    /// The histogram buckets' rows, one per cell (migration postgres/0019): the stored rows of the
    /// batch's cells are read, the batch's buckets merged into them here, and the rows written back
    /// whole. Merging in the upsert (`ll_merge_buckets`, a SQL function unnesting, grouping and
    /// re-aggregating both arrays of every conflicting row) was over half of the leader's fold on
    /// the reference load (BENCHMARKS.md, "PostgreSQL's buckets merged in Swift"), and one row per
    /// cell and source half of what remained ("Histogram buckets packed per cell"). Only the fold's
    /// lock holder writes these rows, so nothing changes between the read and the write.
    ///
    /// The cells go in statements of at most ``bucketCellsPerStatement``: a version-day's row holds
    /// up to 128 buckets of each source, and one statement for every version-day of a backlog
    /// batch read back, merged and sent ~30 MB at once (held by the leader, and by the connection's
    /// encoder after it).
    func flushBuckets(
        app: Int64, suffix: String, rank: [Int32], on connection: PostgresConnection, logger: Logger
    ) async throws {
        // The batch's buckets per cell and source, each source's sorted by bounds.
        var byCell: [Int32: CellBuckets] = [:]
        for (key, count) in buckets {
            byCell[key.cell, default: [:]][names[Int(key.key.source)], default: BucketArrays()].append(
                key.key.start, key.key.end, count)
        }
        byCell = byCell.mapValues { sources in
            sources.mapValues { BucketArrays(buckets: $0.buckets.sorted { ($0.start, $0.end) < ($1.start, $1.end) }) }
        }
        // In the cells' lock order.
        let order = byCell.keys.sorted { rank[Int($0)] < rank[Int($1)] }
        for start in stride(from: 0, to: order.count, by: Self.bucketCellsPerStatement) {
            let cells = order[start..<min(order.count, start + Self.bucketCellsPerStatement)]
            try await flushBuckets(
                Array(cells), of: byCell, app: app, suffix: suffix, on: connection, logger: logger)
        }
    }

    /// Cells of histogram buckets merged and written per statement (``flushBuckets(app:suffix:rank:on:logger:)``).
    static let bucketCellsPerStatement = 256

    /// The bucket rows of `order`'s cells (their batch buckets in `byCell`) merged into the stored
    /// ones and written back, in one statement.
    private func flushBuckets(
        _ order: [Int32], of byCell: [Int32: CellBuckets], app: Int64, suffix: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        // The keys spelled out per row (as the explorer's read does): through the cells' and
        // names' tables, the planner did not reach the primary key and read for seconds. Each key
        // is a probe of the primary key (a LATERAL subquery), as in the explorer's read.
        let keyCells = order.map { cells[Int($0)] }
        var stored: [Int: CellBuckets] = [:]
        for try await (index, var sources, var lengths, var starts, var ends, var counts) in try await connection.query(
            """
            SELECT k.n, b.sources, b.lengths, b.starts, b.ends, b.counts
            FROM unnest(\(keyCells.map(\.day))::text[]::date[], \(keyCells.map(\.version))::text[],
                \(keyCells.map(\.os))::text[], \(keyCells.map(\.device))::text[])
                WITH ORDINALITY AS k (day, version, os, device, n)
            CROSS JOIN LATERAL (
                SELECT x.sources, x.lengths, x.starts, x.ends, x.counts FROM bucket_cells\(unescaped: suffix) x
                WHERE x.app = \(app) AND x.day = k.day AND x.version = k.version AND x.os = k.os
                    AND x.device = k.device
                LIMIT 1) b
            """, logger: logger
        ).decode((Int64, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer).self) {
            // Arrays that do not decode or line up (a null element, lengths that differ: only a
            // damaged database holds them) are replaced by the batch's buckets, and `lifeline
            // refold` rebuilds the row; a row that stopped the fold would stop every read with it.
            guard
                let cell = try? Self.cellBuckets(
                    sources: [String](from: &sources, type: .textArray, format: .binary, context: .default),
                    lengths: [Int32](from: &lengths, type: .int4Array, format: .binary, context: .default),
                    starts: [Double](from: &starts, type: .float8Array, format: .binary, context: .default),
                    ends: [Double](from: &ends, type: .float8Array, format: .binary, context: .default),
                    counts: [Int64](from: &counts, type: .int8Array, format: .binary, context: .default))
            else {
                logger.error("unreadable histogram buckets replaced", metadata: ["table": "bucket_cells\(suffix)"])
                continue
            }
            stored[Int(index) - 1] = cell
        }
        // Every row's arrays end to end in flat arrays, each row a slice of them (its offset and
        // length): text literals of every bound (`Double.description`, then `float8in` on the
        // server) were a tenth of the leader's own CPU on the reference load. Slices of a text
        // array cost the server a walk from its start, so the rows' lists of sources are sent
        // once per distinct list (`shapes`), and a row names its list.
        var starts: [Double] = []
        var ends: [Double] = []
        var counts: [Int64] = []
        var lengths: [Int32] = []
        var shapeNames: [String] = []
        var shapeOffsets: [Int32] = []
        var shapeLengths: [Int32] = []
        var shapeIDs: [[String]: Int32] = [:]
        var rows: (cells: [Int32], shapes: [Int32], lengthOffsets: [Int32], offsets: [Int32], counts: [Int32]) = (
            [], [], [], [], []
        )
        for (offset, cell) in order.enumerated() {
            var merged = byCell[cell] ?? [:]
            for (source, arrays) in stored[offset] ?? [:] {
                merged[source] = merged[source].map { arrays.merged(with: $0) } ?? arrays
            }
            let sources = merged.keys.sorted()
            let shape: Int32
            if let known = shapeIDs[sources] {
                shape = known
            } else {
                shape = Int32(shapeIDs.count + 1)
                shapeIDs[sources] = shape
                shapeOffsets.append(Int32(shapeNames.count))
                shapeLengths.append(Int32(sources.count))
                shapeNames += sources
            }
            let bucketOffset = Int32(starts.count)
            rows.cells.append(Int32(offset) + 1)
            rows.shapes.append(shape)
            rows.lengthOffsets.append(Int32(lengths.count))
            rows.offsets.append(bucketOffset)
            for source in sources {
                // At most 128 buckets per source, neighbours merged past it as the SQLite store
                // does (sample counts exact, bounds widened): only documents that do not share
                // bucket layouts get there (MetricKit's are fixed per metric), and without a bound
                // a client sending new bounds in every document grew a version-day row without
                // end, rewritten whole by every fold.
                let buckets = ExplorerCell.coarsen(merged[source]?.buckets ?? [])
                lengths.append(Int32(buckets.count))
                for bucket in buckets {
                    starts.append(bucket.start)
                    ends.append(bucket.end)
                    counts.append(bucket.count)
                }
            }
            rows.counts.append(Int32(starts.count) - bucketOffset)
        }
        try await connection.query(
            """
            WITH f (l, a, b, c) AS (SELECT \(PackedArray(lengths))::int[], \(PackedArray(starts))::float8[], \(PackedArray(ends))::float8[], \(PackedArray(counts))::bigint[]),
            s (j, names, width) AS MATERIALIZED (
                SELECT u.j, (\(shapeNames)::text[])[u.o + 1 : u.o + u.w], u.w
                FROM unnest(\(PackedArray(shapeOffsets))::int[], \(PackedArray(shapeLengths))::int[]) WITH ORDINALITY AS u (o, w, j))
            INSERT INTO bucket_cells\(unescaped: suffix) (app, day, version, os, device, sources, lengths, starts, ends, counts)
            SELECT \(app), k.d::date, k.v, k.o, k.e, s.names, f.l[r.lo + 1 : r.lo + s.width], f.a[r.o + 1 : r.o + r.w],
                f.b[r.o + 1 : r.o + r.w], f.c[r.o + 1 : r.o + r.w]
            FROM unnest(\(PackedArray(rows.cells))::int[], \(PackedArray(rows.shapes))::int[], \(PackedArray(rows.lengthOffsets))::int[], \(PackedArray(rows.offsets))::int[],
                \(PackedArray(rows.counts))::int[]) WITH ORDINALITY AS r (i, h, lo, o, w, n)
            CROSS JOIN f
            JOIN s ON s.j = r.h
            JOIN \(cellsOf: Columns(keyCells)) ON k.i = r.i
            ORDER BY r.n
            ON CONFLICT (app, day, version, os, device) DO UPDATE SET
                (sources, lengths, starts, ends, counts) =
                (excluded.sources, excluded.lengths, excluded.starts, excluded.ends, excluded.counts)
            """, logger: logger)
    }

    /// A stored row's sources and buckets; nil when its arrays do not line up (a source twice,
    /// lengths that do not add up to the buckets, arrays of unequal lengths).
    static func cellBuckets(
        sources: [String], lengths: [Int32], starts: [Double], ends: [Double], counts: [Int64]
    ) -> CellBuckets? {
        guard sources.count == lengths.count, starts.count == ends.count, ends.count == counts.count,
            lengths.allSatisfy({ $0 >= 0 }), lengths.reduce(0, { $0 + Int($1) }) == counts.count
        else { return nil }
        var cell: CellBuckets = [:]
        var offset = 0
        for (source, length) in zip(sources, lengths) {
            let range = offset..<offset + Int(length)
            offset = range.upperBound
            guard cell[source] == nil else { return nil }
            cell[source] = BucketArrays(
                starts: Array(starts[range]), ends: Array(ends[range]), counts: Array(counts[range]))
        }
        return cell
    }
}
