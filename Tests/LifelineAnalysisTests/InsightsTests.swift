import Foundation
import LifelineAnalysis
import Testing

@Suite("Insights")
struct InsightsTests {
    static let metric = "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"

    /// Per-device-day launch times (ms): log-normal, median 800 ms, σ 0.5, times `factor`.
    static func version(_ name: String, days: Int, factor: Double = 1, _ draws: inout Draws) -> VersionSample {
        VersionSample(
            version: name,
            deviceDays: QuantileSketch((0..<days).map { _ in factor * draws.logNormal(median: 800, sigma: 0.5) }))
    }

    /// The latest version and three references, all from one distribution unless `factor` ≠ 1.
    static func scenario(seed: UInt64, days: Int, factor: Double = 1) -> (VersionSample, [VersionSample]) {
        var draws = Draws(seed: seed)
        let references = ["1.0", "1.1", "1.2"].map { version($0, days: days, &draws) }
        return (version("2.0", days: days, factor: factor, &draws), references)
    }

    static func evaluate(_ s: (VersionSample, [VersionSample]), _ configuration: InsightConfiguration = .init())
        -> [Insight]
    {
        InsightEngine.evaluate(
            metric: metric, population: "all_iphones", latest: s.0, references: s.1, configuration: configuration)
    }

    @Test("a planted +30 % launch regression is found at p50 and p90, with the delta inside its interval")
    func plantedRegression() throws {
        let insights = Self.evaluate(Self.scenario(seed: 7, days: 2_000, factor: 1.3))
        #expect(insights.map(\.percentile) == [0.5, 0.9])
        for insight in insights {
            let delta = try #require(insight.deltaPercentage)
            let interval = try #require(insight.confidenceInterval)
            #expect(insight.classification == .regression)
            #expect(abs(delta - 30) < 6, "delta \(delta)")
            #expect(interval.lower > 10 && interval.lower < delta && delta < interval.upper)
            #expect(!insight.highImpact)
            #expect(insight.latestDeviceDays == 2_000 && insight.referenceDeviceDays == 6_000)
            #expect(insight.referenceVersions == ["1.0", "1.1", "1.2"])
            // Values: the latest percentile and the mean of the references' percentiles.
            let q = insight.percentile
            let (latest, references) = Self.scenario(seed: 7, days: 2_000, factor: 1.3)
            #expect(insight.latestValue == latest.deviceDays.quantile(q))
            let mean = references.compactMap { $0.deviceDays.quantile(q) }.reduce(0, +) / 3
            #expect(abs(try #require(insight.referenceValue) - mean) < 1e-9)
        }
    }

    @Test("same inputs and seed give the same answer; another seed another interval")
    func determinism() {
        let s = Self.scenario(seed: 8, days: 500, factor: 1.1)
        #expect(Self.evaluate(s) == Self.evaluate(s))
        let other = Self.evaluate(s, InsightConfiguration(seed: 99))
        #expect(other.map(\.deltaPercentage) == Self.evaluate(s).map(\.deltaPercentage))
        #expect(other.map(\.confidenceInterval) != Self.evaluate(s).map(\.confidenceInterval))
    }

    @Test("too few device-days on either side, or no reference: insufficient_data, no interval")
    func insufficientData() {
        var draws = Draws(seed: 9)
        let refs = ["1.0", "1.1"].map { Self.version($0, days: 500, &draws) }
        let fewLatest = Self.version("2.0", days: 99, factor: 3, &draws)
        for insight in Self.evaluate((fewLatest, refs)) {
            #expect(insight.classification == .insufficientData)
            #expect(insight.confidenceInterval == nil && !insight.highImpact)
            #expect(insight.deltaPercentage != nil)  // shown as a value, never classified
        }
        let fewReference = refs + [Self.version("1.2", days: 50, &draws)]
        let latest = Self.version("2.0", days: 500, factor: 3, &draws)
        #expect(Self.evaluate((latest, fewReference)).allSatisfy { $0.classification == .insufficientData })
        #expect(
            Self.evaluate((latest, [])).allSatisfy {
                $0.classification == .insufficientData && $0.referenceValue == nil
            })
        #expect(Self.evaluate((latest, refs)).allSatisfy { $0.classification == .regression && $0.highImpact })
    }

    @Test("direction: lower-is-worse metrics regress downwards; a zero reference has no delta")
    func directionAndZero() {
        let s = Self.scenario(seed: 10, days: 1_000, factor: 0.7)
        let down = InsightEngine.evaluate(metric: "x", direction: .lowerIsWorse, latest: s.0, references: s.1)
        #expect(down.allSatisfy { $0.classification == .regression })
        #expect(Self.evaluate(s).allSatisfy { $0.classification == InsightClassification.none })
        let zeros = VersionSample(version: "1.0", deviceDays: QuantileSketch(repeatElement(0, count: 500)))
        let latest = VersionSample(version: "2.0", deviceDays: QuantileSketch(repeatElement(5, count: 500)))
        for insight in InsightEngine.evaluate(metric: "hangs", latest: latest, references: [zeros]) {
            #expect(insight.referenceValue == 0 && insight.deltaPercentage == nil)
            #expect(insight.classification == InsightClassification.none)
        }
    }

    @Test("the Beta order-statistic bootstrap matches resampling device-days one by one")
    func matchesNaiveBootstrap() throws {
        var draws = Draws(seed: 11)
        let latest = Self.version("2.0", days: 300, factor: 1.15, &draws)
        let reference = Self.version("1.0", days: 300, &draws)
        let configuration = InsightConfiguration(percentiles: [0.9], resamples: 2_000)
        let fast = try #require(
            InsightEngine.evaluate(metric: "m", latest: latest, references: [reference], configuration: configuration)
                .first?.confidenceInterval)
        // Naive: draw 300 device-days with replacement from each version, take the p90 of each.
        var rng = BootstrapRNG(seed: 12)
        func resampledP90(_ values: [Double]) -> Double {
            let n = UInt64(values.count)
            let drawn = (0..<n).map { _ in values[Int(rng.next() % n)] }.sorted()
            return drawn[Int(0.9 * Double(n - 1))]
        }
        // The device-day values as the sketch keeps them (each to 1 %).
        let latestValues = (0..<latest.deviceDays.count).map { latest.deviceDays.value(atRank: $0) }
        let referenceValues = (0..<reference.deviceDays.count).map { reference.deviceDays.value(atRank: $0) }
        var deltas = (0..<2_000).map { _ in
            let l = resampledP90(latestValues)
            let r = resampledP90(referenceValues)
            return (l - r) / r * 100
        }
        deltas.sort()
        let naive = DeltaInterval(lower: deltas[Int(0.025 * 1_999)], upper: deltas[Int((0.975 * 1_999).rounded(.up))])
        #expect(abs(fast.lower - naive.lower) < 2.5, "fast \(fast) naive \(naive)")
        #expect(abs(fast.upper - naive.upper) < 2.5, "fast \(fast) naive \(naive)")
    }

    /// 200 baseline scenarios (latest and three references drawn from one distribution), 500
    /// device-days per version, default configuration (1,000 resamples, 10 % threshold, p50 and
    /// p90). The README's "Insights: method" quotes the rate this measures.
    @Test("measured: a regression is reported in ≤ 2 % of baseline scenarios")
    func falsePositiveRate() {
        let baselines = 200
        var falseRegressions = 0
        var falseTrends = 0
        for seed in 0..<UInt64(baselines) {
            let insights = Self.evaluate(Self.scenario(seed: 1_000 + seed, days: 500))
            if insights.contains(where: { $0.classification == .regression }) { falseRegressions += 1 }
            if insights.contains(where: { $0.classification == .trendingUp }) { falseTrends += 1 }
        }
        print(
            "insights: baseline regressions \(falseRegressions)/\(baselines), trending_up \(falseTrends)/\(baselines)")
        #expect(Double(falseRegressions) / Double(baselines) <= 0.02)
    }

    /// 100 scenarios with the latest version's launch times 30 % longer, 500 device-days per version.
    @Test("measured: a planted +30 % launch p90 is a regression in ≥ 95 % of scenarios")
    func power() {
        let planted = 100
        var found = 0
        var trending = 0
        for seed in 0..<UInt64(planted) {
            let insights = Self.evaluate(
                Self.scenario(seed: 5_000 + seed, days: 500, factor: 1.3), InsightConfiguration(percentiles: [0.9]))
            if insights.first?.classification == .regression { found += 1 }
            if insights.first?.classification == .trendingUp { trending += 1 }
        }
        print("insights: +30 % p90 regression \(found)/\(planted), trending_up \(trending)/\(planted)")
        #expect(Double(found) / Double(planted) >= 0.95)
    }
}
