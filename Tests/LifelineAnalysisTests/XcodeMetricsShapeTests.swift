import Foundation
import LifelineAnalysis
import Testing

@Suite("App Store Connect perfPowerMetrics shape")
struct XcodeMetricsShapeTests {
    static func object(_ value: some Encodable) throws -> [String: Any] {
        let data = try JSONEncoder().encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func first(_ object: [String: Any], _ key: String) throws -> [String: Any] {
        let array = try #require(object[key] as? [[String: Any]], "\(key)")
        return try #require(array.first)
    }

    static let full = XcodeMetrics(
        version: "1.0.0",
        insights: .init(
            trendingUp: [],
            regressions: [
                MetricsInsight(
                    metricCategory: .launch, metric: "launchTime", latestVersion: "2.0", summaryString: "s",
                    referenceVersions: "1.0, 1.1", maxLatestVersionValue: 2014.3, subSystemLabel: "UIKit",
                    highImpact: false,
                    populations: [
                        .init(
                            deltaPercentage: 13, percentile: "percentile.ninety", summaryString: "Increased 13%",
                            referenceAverageValue: 1777.88, latestVersionValue: 2014.3, device: "all_iphones")
                    ])
            ]),
        productData: [
            .init(
                platform: "iOS",
                metricCategories: [
                    .init(
                        identifier: .launch,
                        metrics: [
                            .init(
                                identifier: "launchTime",
                                goalKeys: [.init(goalKey: "good", lowerBound: 0, upperBound: 400)],
                                unit: .init(identifier: "milliseconds", displayName: "ms"),
                                datasets: [
                                    .init(
                                        filterCriteria: .init(
                                            percentile: "percentile.fifty", device: "all_iphones",
                                            deviceMarketingName: "All iPhones"),
                                        points: [
                                            .init(
                                                version: "2.0", value: 997.8, errorMargin: 12.5,
                                                percentageBreakdown: .init(value: 40, subSystemLabel: "UIKit"),
                                                goal: "good")
                                        ],
                                        recommendedMetricGoal: .init(value: 400, detail: "d"))
                                ])
                        ])
                ])
        ])

    @Test("every object encodes with exactly Apple's field names")
    func fieldNames() throws {
        let root = try Self.object(Self.full)
        #expect(Set(root.keys) == ["version", "insights", "productData"])
        let insights = try #require(root["insights"] as? [String: Any])
        #expect(Set(insights.keys) == ["trendingUp", "regressions"])
        let regression = try Self.first(insights, "regressions")
        #expect(
            Set(regression.keys) == [
                "metricCategory", "metric", "latestVersion", "summaryString", "referenceVersions",
                "maxLatestVersionValue", "subSystemLabel", "highImpact", "populations",
            ])
        #expect(regression["metricCategory"] as? String == "LAUNCH")
        let population = try Self.first(regression, "populations")
        #expect(
            Set(population.keys) == [
                "deltaPercentage", "percentile", "summaryString", "referenceAverageValue", "latestVersionValue",
                "device",
            ])
        let product = try Self.first(root, "productData")
        #expect(Set(product.keys) == ["platform", "metricCategories"])
        let category = try Self.first(product, "metricCategories")
        #expect(Set(category.keys) == ["identifier", "metrics"])
        let metric = try Self.first(category, "metrics")
        #expect(Set(metric.keys) == ["identifier", "goalKeys", "unit", "datasets"])
        #expect(Set(try Self.first(metric, "goalKeys").keys) == ["goalKey", "lowerBound", "upperBound"])
        #expect(Set(try #require(metric["unit"] as? [String: Any]).keys) == ["identifier", "displayName"])
        let dataset = try Self.first(metric, "datasets")
        #expect(Set(dataset.keys) == ["filterCriteria", "points", "recommendedMetricGoal"])
        #expect(
            Set(try #require(dataset["filterCriteria"] as? [String: Any]).keys) == [
                "percentile", "device", "deviceMarketingName",
            ])
        #expect(Set(try #require(dataset["recommendedMetricGoal"] as? [String: Any]).keys) == ["value", "detail"])
        let point = try Self.first(dataset, "points")
        #expect(Set(point.keys) == ["version", "value", "errorMargin", "percentageBreakdown", "goal"])
        #expect(Set(try #require(point["percentageBreakdown"] as? [String: Any]).keys) == ["value", "subSystemLabel"])
    }

    @Test("Apple's published example response decodes and re-encodes unchanged")
    func appleExample() throws {
        let example = """
            {"version":"1.0.0","insights":{"regressions":[{"latestVersion":"2.0","maxLatestVersionValue":2014.3,
            "metric":"launchTime","metricCategory":"LAUNCH","populations":[{"deltaPercentage":10,"device":"all_iphones",
            "latestVersionValue":997.8,"percentile":"percentile.fifty","referenceAverageValue":907.48,
            "summaryString":"Increased 10% across iPhone (All)"}],"summaryString":"Launch Time trended up"}],
            "trendingUp":[]},"productData":[{"platform":"iOS","metricCategories":[{"identifier":"LAUNCH","metrics":[
            {"identifier":"launchTime","unit":{"displayName":"ms","identifier":"milliseconds"},"datasets":[
            {"filterCriteria":{"device":"all_iphones","deviceMarketingName":"All iPhones","percentile":"percentile.fifty"},
            "points":[{"value":768.7,"version":"1.0"},{"value":997.8,"version":"2.0"}]}]}]}]}]}
            """
        let decoded = try JSONDecoder().decode(XcodeMetrics.self, from: Data(example.utf8))
        #expect(decoded.insights?.regressions?.first?.populations?.first?.referenceAverageValue == 907.48)
        #expect(decoded.productData?.first?.metricCategories?.first?.identifier == .launch)
        let again = try JSONDecoder().decode(XcodeMetrics.self, from: JSONEncoder().encode(decoded))
        #expect(again == decoded)
        #expect(
            MetricCategoryIdentifier.allCases.map(\.rawValue) == [
                "HANG", "LAUNCH", "MEMORY", "DISK", "BATTERY", "TERMINATION", "ANIMATION",
            ])
        #expect(XcodeMetrics.contentType == "application/vnd.apple.xcode-metrics+json")
    }

    @Test("Lifeline insights become an Apple MetricsInsight")
    func fromInsights() throws {
        var draws = Draws(seed: 21)
        let references = ["1.0", "1.1"].map { InsightsTests.version($0, days: 1_000, &draws) }
        let latest = InsightsTests.version("2.0", days: 1_000, factor: 1.3, &draws)
        let insights = InsightEngine.evaluate(metric: "launchTime", latest: latest, references: references)
        let apple = try #require(
            MetricsInsight(category: .launch, device: "all_iphones", deviceName: "iPhone (All)", insights: insights))
        #expect(apple.metricCategory == .launch && apple.latestVersion == "2.0")
        #expect(apple.referenceVersions == "1.0, 1.1")
        #expect(apple.populations?.map(\.percentile) == ["percentile.fifty", "percentile.ninety"])
        #expect(apple.populations?.last?.latestVersionValue == insights.last?.latestValue)
        #expect(apple.maxLatestVersionValue == insights.compactMap(\.latestValue).max())
        #expect(apple.summaryString?.contains("increased") == true)
        #expect(MetricsInsight(category: .launch, device: "d", deviceName: "d", insights: []) == nil)
    }
}
