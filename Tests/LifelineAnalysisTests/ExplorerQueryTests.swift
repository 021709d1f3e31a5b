import Foundation
import LifelineAnalysis
import LifelineModel
import Testing

@Suite("Explorer query and perfPowerMetrics")
struct ExplorerQueryTests {
    static func key(_ metric: String, version: String, device: String = "iPhone15,2", state: String = "all")
        -> ExplorerCellKey
    {
        ExplorerCellKey(metric: metric, version: version, device: device, os: "17.4", appState: state)
    }

    static func values(_ value: Double, _ n: Int) -> ExplorerCell {
        ExplorerCell(Array(repeating: ExplorerSample.value(value), count: n))
    }

    @Test("without app_state the query reads the overall state only; grouped by it, each state is a row")
    func appStates() {
        let cells: [(key: ExplorerCellKey, cell: ExplorerCell)] = [
            (Self.key("memory.peak", version: "1.0"), Self.values(100, 60)),
            (Self.key("memory.peak", version: "1.0", state: "screen/home"), Self.values(900, 60)),
            (Self.key("memory.peak", version: "1.1"), Self.values(200, 60)),
        ]
        let rows = ExplorerQuery.rows(cells)
        #expect(rows.count == 1)
        #expect(rows.first?.deviceDays == 120 && rows.first?.version == nil)
        let byVersion = ExplorerQuery.rows(cells, groupBy: [.version])
        #expect(byVersion.map(\.version) == ["1.0", "1.1"])
        #expect(byVersion.map(\.p50) == [100, 200])
        let byState = ExplorerQuery.rows(cells, groupBy: [.appState], filters: [.version: ["1.0"]])
        #expect(byState.map(\.appState) == ["all", "screen/home"])
        #expect(byState.map(\.p50) == [100, 900])
        #expect(ExplorerQuery.rows(cells, category: .launch).isEmpty)
        #expect(ExplorerQuery.rows([(Self.key("no.such_metric", version: "1"), Self.values(1, 60))]).isEmpty)
    }

    @Test("a fold of real fixtures: cells per observation, the same rows from merged cells in any split")
    func foldFixtures() throws {
        var stored: [ExplorerCellKey: ExplorerCell] = [:]
        for file in try ExplorerFixtures.metricFiles {
            let payload = try ExplorerFixtures.metric(file)
            let cells = ExplorerQuery.cells(
                ExplorerExtractor.extract(payload), version: payload.meta.appVersion ?? "", device: "iphone", os: "")
            for (key, cell) in cells { stored[key, default: ExplorerCell()].merge(cell) }
        }
        let rows = ExplorerQuery.rows(stored.map { ($0.key, $0.value) }, groupBy: [.version], minimumDeviceDays: 1)
        let launch = rows.filter { $0.metric == "launch.time_to_first_draw" }
        #expect(launch.count == 2)  // the legacy 4.2.0 payload and the 2.0.0 report's version
        #expect(launch.allSatisfy { $0.p50 != nil && $0.deviceDays == 1 })
        #expect(rows.contains { $0.metric == "termination.background.memory_pressure.per_device_day" && $0.mean == 7 })
    }

    static func row(_ metric: String, _ version: String, p50: Double, p90: Double) throws -> ExplorerRow {
        let values = (0..<100).map { ExplorerSample.value($0 < 50 ? p50 : ($0 < 90 ? (p50 + p90) / 2 : p90)) }
        let row = ExplorerRow(
            metric: try #require(ExplorerCatalog.metric(metric)), cell: ExplorerCell(values),
            groups: ExplorerGroupKeys(version: version))
        return row
    }

    @Test("perfPowerMetrics: Apple's keys at every level, one dataset per percentile, points in version order")
    func perfPowerShape() throws {
        let rows = [
            try Self.row("launch.time_to_first_draw", "1.1", p50: 400, p90: 900),
            try Self.row("animation.hitch_time_ratio", "1.0", p50: 8, p90: 30),
            try Self.row("animation.hitch_time_ratio", "1.1", p50: 12, p90: 60),
        ]
        // Constant device-days: p90 60 against 30, +100 % with an interval clear of 0.
        let evaluated = InsightEngine.evaluate(
            metric: "animation.hitch_time_ratio",
            latest: VersionSample(version: "1.1", deviceDays: QuantileSketch(Array(repeating: 60, count: 100))),
            references: [VersionSample(version: "1.0", deviceDays: QuantileSketch(Array(repeating: 30, count: 100)))],
            configuration: InsightConfiguration(percentiles: [0.9]))
        let insight = try #require(evaluated.first)
        #expect(insight.classification == .regression && insight.highImpact)
        let answer = PerfPowerMetricsBuilder.build(
            rows: rows,
            insights: [
                PerfPowerInsightGroup(metric: "animation.hitch_time_ratio", device: "iphone", insights: [insight])
            ],
            versions: ["1.0", "1.1"])
        let root = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(answer)) as? [String: Any])
        #expect(Set(root.keys) == ["version", "insights", "productData"])
        let insights = try #require(root["insights"] as? [String: Any])
        #expect(Set(insights.keys) == ["regressions", "trendingUp"])
        let regression = try #require((insights["regressions"] as? [[String: Any]])?.first)
        #expect(regression["metricCategory"] as? String == "ANIMATION")
        #expect(regression["metric"] as? String == "animation.hitch_time_ratio")
        #expect(regression["highImpact"] as? Bool == true)
        let population = try #require((regression["populations"] as? [[String: Any]])?.first)
        #expect(
            population["device"] as? String == "all_iphones"
                && population["percentile"] as? String == "percentile.ninety")
        let product = try #require((root["productData"] as? [[String: Any]])?.first)
        #expect(Set(product.keys) == ["platform", "metricCategories"])
        let categories = try #require(product["metricCategories"] as? [[String: Any]])
        #expect(categories.compactMap { $0["identifier"] as? String } == ["LAUNCH", "ANIMATION"])
        let launch = try #require((categories[0]["metrics"] as? [[String: Any]])?.first)
        #expect(Set(launch.keys) == ["identifier", "unit", "datasets"])  // no band: no goalKeys
        #expect(launch["identifier"] as? String == "launchTime")
        let unit = try #require(launch["unit"] as? [String: Any])
        #expect(unit["identifier"] as? String == "milliseconds" && unit["displayName"] as? String == "ms")
        let hitch = try #require((categories[1]["metrics"] as? [[String: Any]])?.first)
        #expect(Set(hitch.keys) == ["identifier", "unit", "datasets", "goalKeys"])
        let goalKey = try #require((hitch["goalKeys"] as? [[String: Any]])?.first)
        #expect(Set(goalKey.keys) == ["goalKey", "lowerBound", "upperBound"])
        let datasets = try #require(hitch["datasets"] as? [[String: Any]])
        #expect(datasets.count == 2)
        let criteria = try #require(datasets[0]["filterCriteria"] as? [String: Any])
        #expect(Set(criteria.keys) == ["percentile", "device", "deviceMarketingName"])
        #expect(criteria["percentile"] as? String == "percentile.fifty" && criteria["device"] as? String == "all")
        let points = try #require(datasets[0]["points"] as? [[String: Any]])
        #expect(Set(points[0].keys) == ["version", "value", "errorMargin", "goal"])
        #expect(points.compactMap { $0["version"] as? String } == ["1.0", "1.1"])
        let values = points.compactMap { $0["value"] as? Double }
        #expect(values.count == 2 && abs(values[0] - 8) <= 0.08 && abs(values[1] - 12) <= 0.12)  // sketch: ≤ 1 %
        #expect(points.compactMap { $0["goal"] as? String } == ["good", "fair"])
        let ninety = try #require(datasets[1]["points"] as? [[String: Any]])
        #expect(ninety.compactMap { $0["goal"] as? String } == ["fair", "poor"])
    }

    @Test("perfPowerMetrics leaves out rows it cannot stand behind and trends go to trendingUp")
    func perfPowerOmissions() throws {
        let thin = ExplorerRow(
            metric: try #require(ExplorerCatalog.metric("memory.peak")), cell: Self.values(5, 3),
            groups: ExplorerGroupKeys(version: "1.0"))
        var trend = try #require(
            InsightEngine.evaluate(
                metric: "memory.peak",
                latest: VersionSample(version: "1.1", deviceDays: QuantileSketch(Array(repeating: 12, count: 100))),
                references: [
                    VersionSample(version: "1.0", deviceDays: QuantileSketch(Array(repeating: 10, count: 100)))
                ],
                configuration: InsightConfiguration(percentiles: [0.5])
            ).first)
        trend.classification = .trendingUp
        let answer = PerfPowerMetricsBuilder.build(
            rows: [thin], insights: [PerfPowerInsightGroup(metric: "memory.peak", device: nil, insights: [trend])])
        #expect(answer.productData?.first?.metricCategories?.isEmpty == true)
        #expect(answer.insights?.trendingUp?.count == 1 && answer.insights?.regressions?.isEmpty == true)
        trend.classification = .none
        let quiet = PerfPowerMetricsBuilder.build(
            rows: [], insights: [PerfPowerInsightGroup(metric: "memory.peak", device: nil, insights: [trend])])
        #expect(quiet.insights?.trendingUp?.isEmpty == true && quiet.insights?.regressions?.isEmpty == true)
    }
}
