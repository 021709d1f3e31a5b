import LifelineAnalysis
import LifelineModel
import LifelineStore
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
        let temp = TemporaryDatabase()
        let database = try temp.open()
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
        // Counts summed three times: NormalApp 5 → 15, MemoryPressure 13 → 39, zero counts not stored.
        let exits = try database.exits(Scope(app: Fixtures.app, days: DayRange(from: "2019-10-21", to: "2019-10-21")))
        #expect(
            exits.map { "\($0.state) \($0.reason) \($0.count)" }.sorted() == [
                "background BackgroundTaskAssertionTimeout 9", "background MemoryPressure 39",
                "foreground NormalApp 15",
            ])
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("a cell's buckets stay within 128 entries with exact sample counts when layouts differ")
    func bucketsCoarsenedWithExactCounts() async throws {
        let temp = TemporaryDatabase()
        let database = try temp.open()
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
        let rows = try database.buckets(
            Scope(app: Fixtures.app, days: DayRange(from: "2019-10-21", to: "2019-10-21")), source: .metric(Self.launch)
        )
        #expect(rows.map(\.count).reduce(0, +) == expected)
        #expect(try database.integrityCheck() == "ok")
    }
}
