import LifelineAnalysis
import LifelineIngest
import LifelineModel
@testable import LifelineSQLite
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("Packed rollup cells")
struct PackedRollupTests {
    static let launch = "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"

    /// A payload whose launch histogram has `count` distinct 10 ms buckets starting at `offset` ms,
    /// bucket `i` holding `i + 1` samples.
    static func wideHistogramMetric(offset: Double, count: Int) -> MetricPayload {
        var metric = Fixtures.metric(version: "5.0.0", day: 21)
        var buckets: [(Double?, Double?, Int64)] = []
        for index in 0..<count {
            let start = offset + Double(index) * 10
            buckets.append((start, start + 10, Int64(index + 1)))
        }
        metric.histograms = [NamedHistogram(name: launch, histogram: Fixtures.histogram(buckets))]
        return metric
    }

    @Test("one row per metric cell and per bucket source, merged across batches by the SQL merge functions")
    func oneRowPerCellMergedAcrossBatches() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // Three batches into the same cell (same app, day, version, OS, device).
        try await IngestWriter.withWriter(database: database) { writer in
            for seed in ["p1", "p2", "p3"] {
                _ = try await writer.submit(
                    IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: seed)])
                )
            }
        }
        for table in ["rollup_metrics", "rollup_metrics_by_version"] {
            #expect(try database.query("SELECT count(*) FROM \(table)") == [[.integer(1)]], "\(table)")
        }
        // Two sources (launch histogram, restoration durations), one version cell each.
        #expect(try database.query("SELECT count(*) FROM rollup_buckets_by_version") == [[.integer(2)]])
        // The fine level holds both in one row of the cell (migration 0021), with the same buckets.
        #expect(try database.query("SELECT count(*) FROM rollup_bucket_cells") == [[.integer(1)]])
        let fine = try database.rollupEntries("rollup_bucket_cells", "sources")
        let byVersion = try database.rollupEntries("rollup_buckets_by_version", "buckets")
        #expect(Set(fine.map { $0[5] }).count == 2)
        #expect(fine.map { Array($0[5...]) } == byVersion.map { Array($0[3...]) })
        // Counts summed three times: NormalApp 5 → 15, MemoryPressure 13 → 39, zero counts not stored.
        let exits = try await database.reads.exits(
            Scope(app: Fixtures.app, days: DayRange(from: "2019-10-21", to: "2019-10-21")))
        #expect(
            exits.map { "\($0.state) \($0.reason) \($0.count)" }.sorted() == [
                "background BackgroundTaskAssertionTimeout 9", "background MemoryPressure 39",
                "foreground NormalApp 15",
            ])
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("a cell's buckets stay within 128 entries with exact sample counts when layouts differ")
    func bucketsCoarsenedWithExactCounts() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // 100 + 100 distinct bounds in two batches: each fits, so the merge in the upsert
        // (ll_merge_buckets) is what must coarsen (200 > 128).
        let first = Self.wideHistogramMetric(offset: 0, count: 100)
        let second = Self.wideHistogramMetric(offset: 5, count: 100)
        try await IngestWriter.withWriter(database: database) { writer in
            _ = try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(first), hashSeed: "w1")]))
            _ = try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(second), hashSeed: "w2")]))
        }
        let launchID = try #require(
            database.query("SELECT id FROM metric_names WHERE value = ?", [.text(Self.launch)]).first?.first)
        let entries = try database.rollupEntries("rollup_buckets_by_version", "buckets").filter { $0[3] == launchID }
        #expect(entries.count <= 128)
        #expect(entries.count >= 64)
        let expected = Int64(2 * (100 * 101 / 2))
        #expect(entries.compactMap { $0.last?.integer }.reduce(0, +) == expected)
        // Bounds widen but still cover exactly the samples' range.
        #expect(entries.first?[4] == .real(0))
        #expect(entries.map { $0[5] }.contains(.real(1_005)))
        // The reader sums the same cell into the same total.
        let rows = try await database.reads.buckets(
            Scope(app: Fixtures.app, days: DayRange(from: "2019-10-21", to: "2019-10-21")), source: .metric(Self.launch)
        )
        #expect(rows.map(\.count).reduce(0, +) == expected)
        #expect(try database.integrityCheck() == "ok")
    }
}

@Suite("Packed rollup blob encoding")
struct RollupBlobEncodingTests {
    @Test("counts and whole-millisecond buckets round-trip in ~4 bytes an entry")
    func compactRoundTrip() {
        let counts: [CountEntry] = (0..<40).map { (index: Int) -> CountEntry in
            let i = Int64(index)
            return CountEntry(a: i / 20, b: 3 + i, count: i * 37)
        }
        let packed = RollupBlob.encode(counts)
        #expect(packed.first == RollupBlob.Layout.varints.rawValue)
        #expect(RollupBlob.decode(packed, as: CountEntry.self) == counts)
        #expect(packed.count <= 1 + counts.count * 5, "\(packed.count) bytes for \(counts.count) entries")

        let buckets: [BucketEntry] = (0..<128).map { (index: Int) -> BucketEntry in
            let start = Double(index * 10)
            return BucketEntry(start: start, end: start + 10, count: Int64(1 + index * 50))
        }
        let packedBuckets = RollupBlob.encode(buckets)
        #expect(RollupBlob.decode(packedBuckets, as: BucketEntry.self) == buckets)
        #expect(packedBuckets.count <= 1 + buckets.count * 5, "\(packedBuckets.count) bytes")
        // Extremes survive: negative values, 2^53 bounds, Int64 counts.
        let extremes = [
            CountEntry(a: -5, b: Int64.min, count: Int64.max), CountEntry(a: 0, b: 0, count: 0),
            CountEntry(a: Int64.max, b: -1, count: -1),
        ]
        #expect(RollupBlob.decode(RollupBlob.encode(extremes), as: CountEntry.self) == extremes)
        let wide = [BucketEntry(start: -9_007_199_254_740_992, end: 9_007_199_254_740_992, count: 7)]
        #expect(RollupBlob.decode(RollupBlob.encode(wide), as: BucketEntry.self) == wide)
    }

    @Test("buckets with fractional bounds use 8-byte words, exactly")
    func fractionalBoundsFallBack() {
        let buckets = [BucketEntry(start: 0, end: 2.5, count: 3), BucketEntry(start: 2.5, end: 1e300, count: 1)]
        let packed = RollupBlob.encode(buckets)
        #expect(packed.first == RollupBlob.Layout.words.rawValue)
        #expect(packed.count == 1 + 2 * 24)
        #expect(RollupBlob.decode(packed, as: BucketEntry.self) == buckets)
    }

    @Test("two packed lists merged as streams give the bytes of the decoded merge, or defer to it")
    func streamedMerge() {
        /// Seeded lists of buckets on a 10 ms grid, some shared, counts near Int64.max at times.
        var generator = SplitMix64(seed: 7)
        func buckets(_ count: Int) -> [BucketEntry] {
            RollupBlob.normalize(
                (0..<count).map { _ in
                    let start = Double(generator.next() % 300) * 10
                    let count = generator.next() % 10 == 0 ? Int64.max - 3 : Int64(generator.next() % 1_000)
                    return BucketEntry(start: start, end: start + Double(10 * (1 + generator.next() % 3)), count: count)
                })
        }
        func streamed(_ x: [UInt8], _ y: [UInt8], limit: Int) -> [UInt8]? {
            x.withUnsafeBytes { x in y.withUnsafeBytes { y in RollupBlob.mergePacked(x, y, limit: limit) } }
        }
        for round in 0..<200 {
            let x = buckets(round % 70)
            let y = buckets((round * 7) % 90)
            let merged = RollupBlob.merge(x, y)
            let packed = streamed(RollupBlob.encode(x), RollupBlob.encode(y), limit: RollupBlob.maxBuckets)
            if merged.count > RollupBlob.maxBuckets {
                #expect(packed == nil)
            } else {
                #expect(packed == RollupBlob.encode(merged))
            }
            // The fold's merge of version cells gives the decoded merge, coarsened, either way.
            #expect(
                RollupCells.mergeBuckets(RollupBlob.encode(x), RollupBlob.encode(y))
                    == RollupBlob.encode(RollupBlob.coarsen(merged)))
        }
        let counts = [CountEntry(a: 0, b: 2, count: 5), CountEntry(a: 1, b: -4, count: 1)]
        let more = [CountEntry(a: 0, b: 2, count: 3), CountEntry(a: 0, b: 3, count: 1)]
        #expect(
            streamed(RollupBlob.encode(counts), RollupBlob.encode(more), limit: .max)
                == RollupBlob.encode(RollupBlob.merge(counts, more)))
        // An empty blob is an empty list; the words layout is left to the decoded merge.
        #expect(streamed([], RollupBlob.encode(counts), limit: .max) == RollupBlob.encode(counts))
        let fractional = RollupBlob.encode([BucketEntry(start: 0, end: 2.5, count: 3)])
        #expect(streamed(fractional, RollupBlob.encode([BucketEntry(start: 0, end: 10, count: 1)]), limit: .max) == nil)
    }

    @Test("a fine cell's sources in one blob: found by id, merged per source, in SQL too; damage never crashes")
    func bucketCells() throws {
        let a = RollupBlob.encode([BucketEntry(start: 0, end: 10, count: 2), BucketEntry(start: 10, end: 20, count: 1)])
        let b = RollupBlob.encode([BucketEntry(start: 10, end: 20, count: 4)])
        let words = RollupBlob.encode([BucketEntry(start: 0, end: 2.5, count: 3)])
        let empty = RollupBlob.encode([BucketEntry]())
        let x = BucketCell.encode([(7, a), (3, words)])
        let y = BucketCell.encode([(7, b), (9, a), (5, empty), (-2, b)])
        func lookup(_ source: Int64, _ cell: [UInt8]) -> [UInt8]? {
            cell.withUnsafeBytes { BucketCell.buckets(of: source, in: $0).map { Array($0) } }
        }
        #expect(lookup(3, x) == words && lookup(7, x) == a && lookup(-2, y) == b)
        #expect(lookup(5, y) == nil && lookup(4, x) == nil && lookup(8, y) == nil)
        let merged = x.withUnsafeBytes { x in y.withUnsafeBytes { y in BucketCell.merge(x, y) } }
        let expected = BucketCell.encode([(-2, b), (3, words), (7, RollupCells.mergeBuckets(a, b)), (9, a)])
        #expect(merged == expected)
        #expect(
            lookup(7, merged).map { RollupBlob.decode($0, as: BucketEntry.self) } == [
                BucketEntry(start: 0, end: 10, count: 2), BucketEntry(start: 10, end: 20, count: 5),
            ])
        // The SQL functions the fold's upsert and the reader call.
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        #expect(
            try database.query(
                "SELECT ll_merge_bucket_cells(?1, ?2), ll_cell_buckets(?1, 3), ll_cell_buckets(?1, 9)",
                [.blob(x), .blob(y)]) == [[.blob(expected), .blob(words), .null]])
        // A cut blob yields its whole sources before the cut, never a crash.
        for cut in 0..<merged.count {
            var sources: [Int64] = []
            Array(merged.prefix(cut)).withUnsafeBytes { raw in
                var cursor = BucketCell.Cursor(raw)
                while let entry = cursor.next() { sources.append(entry.source) }
            }
            #expect(sources == Array([-2, 3, 7, 9].prefix(sources.count)))
        }
    }

    @Test("the fine cache's buckets packed per cell merge as their lists per source do")
    func bucketsPackedPerCell() {
        let cell = RollupDeltas.Cell(app: 1, day: 20_000, version: 2, os: 3, device: 4)
        let other = RollupDeltas.Cell(app: 1, day: 20_000, version: 2, os: 5, device: 4)
        func deltas(_ entries: [(RollupDeltas.Cell, Int64, Double, Int64)]) -> RollupDeltas {
            var log = RollupDeltas()
            for (cell, source, start, count) in entries {
                log.appendBucket(cell: cell, source: source, start: start, end: start + 10, count: count)
            }
            return log
        }
        let first: [(RollupDeltas.Cell, Int64, Double, Int64)] = [
            (cell, 7, 0, 2), (cell, 3, 0, 5), (cell, 7, 10, 1), (other, 7, 0, 1),
        ]
        let second: [(RollupDeltas.Cell, Int64, Double, Int64)] = [
            (cell, 7, 10, 4), (cell, 9, 20, 1), (other, 3, 5, 2),
        ]
        // Each fold's cells packed, then merged in the cache…
        var cache = RollupCells.finePacked(deltas(first))
        cache.merge(RollupCells.finePacked(deltas(second)))
        // …hold what the per-source lists of both folds at once pack into, and so do both folds'
        // logs packed at once (`cell` comes back after `other`: merged).
        let whole = RollupCells(deltas(first + second), level: .fine)
        var expected: [RollupDeltas.Cell: [UInt8]] = [:]
        for key in Set(whole.buckets.keys.map(\.cell)) {
            expected[key] = BucketCell.encode(
                whole.buckets.filter { $0.key.cell == key }.map { ($0.key.source, $0.value) })
        }
        #expect(cache.buckets.isEmpty)
        #expect(cache.bucketCells == expected)
        #expect(RollupCells.finePacked(deltas(first + second)).bucketCells == expected)
        #expect(cache.metrics.isEmpty && whole.metrics.isEmpty)
        // Six lists counted, (cell, 7) once per fold: the bound's count is an upper bound.
        #expect(cache.count == 6)
    }

    @Test("a damaged blob yields what was readable, never a crash")
    func damagedBlobs() {
        let counts: [CountEntry] = (0..<10).map { (index: Int) -> CountEntry in
            CountEntry(a: 1, b: Int64(index), count: 1_000_000)
        }
        let packed = RollupBlob.encode(counts)
        for cut in 0..<packed.count {
            let decoded = RollupBlob.decode(Array(packed.prefix(cut)), as: CountEntry.self)
            #expect(decoded.count <= counts.count)
            #expect(Array(counts.prefix(decoded.count)) == decoded)
        }
        #expect(RollupBlob.decode([0xFF, 1, 2, 3], as: CountEntry.self).isEmpty)
        #expect(RollupBlob.decode([1] + [UInt8](repeating: 0xFF, count: 40), as: CountEntry.self).isEmpty)
    }
}
