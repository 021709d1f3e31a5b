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

    /// The histogram buckets' rows: the stored arrays of the batch's cells and sources are read,
    /// the batch's buckets merged into them here, and the rows written back whole. Merging in the
    /// upsert (`ll_merge_buckets`, a SQL function unnesting, grouping and re-aggregating both
    /// arrays of every conflicting row) was over half of the leader's fold on the reference load
    /// (BENCHMARKS.md, "PostgreSQL's buckets merged in Swift"). Only the fold's lock holder writes
    /// these rows, so nothing changes between the read and the write.
    func flushBuckets(
        app: Int64, suffix: String, rank: (cells: [Int32], names: [Int32]), all: Columns,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        // Sorted by cell, source and bounds: each row's buckets are one run, already in order.
        let sorted = buckets.sorted { a, b in
            let (x, y) = (a.key, b.key)
            if x.cell != y.cell { return rank.cells[Int(x.cell)] < rank.cells[Int(y.cell)] }
            if x.key.source != y.key.source { return rank.names[Int(x.key.source)] < rank.names[Int(y.key.source)] }
            return (x.key.start, x.key.end) < (y.key.start, y.key.end)
        }
        var order: [(cell: Int32, source: Int32)] = []
        var batch: [BucketArrays] = []
        for (key, count) in sorted {
            if order.last.map({ $0 != (key.cell, key.key.source) }) ?? true {
                order.append((key.cell, key.key.source))
                batch.append(BucketArrays())
            }
            batch[batch.count - 1].append(key.key.start, key.key.end, count)
        }
        let cellIndexes = order.map { $0.cell + 1 }
        let sourceIndexes = order.map { $0.source + 1 }
        // The keys spelled out per row (as the explorer's read does): through the cells' and
        // names' tables, the planner did not reach the primary key and read for seconds.
        let keyCells = order.map { cells[Int($0.cell)] }
        let keySources = order.map { names[Int($0.source)] }
        var stored: [Int: BucketArrays] = [:]
        for try await (index, starts, ends, counts) in try await connection.query(
            """
            SELECT k.n, b.starts, b.ends, b.counts
            FROM unnest(\(keyCells.map(\.day))::text[]::date[], \(keyCells.map(\.version))::text[],
                \(keyCells.map(\.os))::text[], \(keyCells.map(\.device))::text[], \(keySources)::text[])
                WITH ORDINALITY AS k (day, version, os, device, source, n)
            JOIN bucket_cells\(unescaped: suffix) b ON b.app = \(app) AND b.day = k.day AND b.version = k.version
                AND b.os = k.os AND b.device = k.device AND b.source = k.source
            """, logger: logger
        ).decode((Int64, [Double], [Double], [Int64]).self) {
            // Arrays of unequal lengths (only a damaged database holds them) are replaced by the
            // batch's buckets; `lifeline refold` rebuilds the row.
            guard starts.count == ends.count, ends.count == counts.count else {
                logger.error("unreadable histogram buckets replaced", metadata: ["table": "bucket_cells\(suffix)"])
                continue
            }
            stored[Int(index) - 1] = BucketArrays(starts: starts, ends: ends, counts: counts)
        }
        // Every row's arrays end to end in three binary arrays, each row a slice of them (its
        // offset and length): text literals of every bound (`Double.description`, then
        // `float8in` on the server) were a tenth of the leader's own CPU on the reference load.
        var starts: [Double] = []
        var ends: [Double] = []
        var counts: [Int64] = []
        var offsets: [Int32] = []
        var lengths: [Int32] = []
        for (offset, mine) in batch.enumerated() {
            let merged = stored[offset].map { $0.merged(with: mine) } ?? mine
            offsets.append(Int32(starts.count))
            lengths.append(Int32(merged.buckets.count))
            for bucket in merged.buckets {
                starts.append(bucket.start)
                ends.append(bucket.end)
                counts.append(bucket.count)
            }
        }
        try await connection.query(
            """
            WITH f (a, b, c) AS (SELECT \(starts)::float8[], \(ends)::float8[], \(counts)::bigint[])
            INSERT INTO bucket_cells\(unescaped: suffix) (app, day, version, os, device, source, starts, ends, counts)
            SELECT \(app), k.d::date, k.v, k.o, k.e, s.s, f.a[r.o + 1 : r.o + r.l], f.b[r.o + 1 : r.o + r.l],
                f.c[r.o + 1 : r.o + r.l]
            FROM unnest(\(cellIndexes)::int[], \(sourceIndexes)::int[], \(offsets)::int[], \(lengths)::int[])
                WITH ORDINALITY AS r (i, j, o, l, n)
            CROSS JOIN f
            JOIN \(cellsOf: all) ON k.i = r.i
            JOIN unnest(\(names)::text[]) WITH ORDINALITY AS s (s, j) ON s.j = r.j
            ORDER BY r.n
            ON CONFLICT (app, day, version, os, device, source) DO UPDATE SET
                (starts, ends, counts) = (excluded.starts, excluded.ends, excluded.counts)
            """, logger: logger)
    }
}
