import Foundation
import LifelineModel

/// Which way a metric gets worse.
package enum MetricDirection: String, Sendable, Equatable, Codable {
    /// Launch time, hang time, memory, disk writes, CPU, hitches, exits: every MetricKit figure.
    case higherIsWorse = "higher_is_worse"
    /// A figure where less is worse (none among MetricKit's today; kept for derived figures).
    case lowerIsWorse = "lower_is_worse"
}

/// The per-device-day values of one metric in one app version and population (device class), as a
/// store can keep them: one ``QuantileSketch`` entry per device-day (a metric payload).
///
/// Why a sketch and not the raw values: the aggregator folds each payload into the sketch of its
/// version, so the state is mergeable across days and nodes and bounded in size, while a list of
/// device-day values grows with the fleet. The bootstrap needs nothing more: resampling device-
/// days with replacement from the sketch's buckets (each bucket weighted by its count) is the
/// bootstrap of the device-day values rounded to 1 %, far below any threshold used here.
package struct VersionSample: Sendable, Equatable {
    /// The app version.
    package var version: String
    /// One entry per device-day.
    package var deviceDays: QuantileSketch

    package init(version: String, deviceDays: QuantileSketch) {
        self.version = version
        self.deviceDays = deviceDays
    }
}

/// How insights are computed (defaults in parentheses; the README's "Insights: method" states them).
package struct InsightConfiguration: Sendable, Equatable {
    /// Percentiles compared, as fractions (0.5, 0.9).
    package var percentiles: [Double] = [0.5, 0.9]
    /// Bootstrap resamples per percentile (1,000; clamped to 100…10,000).
    package var resamples: Int = 1000
    /// Two-sided confidence of the interval (0.95).
    package var confidence: Double = 0.95
    /// Fewest device-days the latest version and each reference version need (100).
    package var minimumDeviceDays: UInt64 = 100
    /// A regression or a trend is a change worse by at least this many percent (10).
    package var thresholdPercent: Double = 10
    /// High impact from this many percent worse (100).
    package var highImpactPercent: Double = 100
    /// The seed of the bootstrap (same inputs and seed ⇒ same answer).
    package var seed: UInt64 = 0x4C49_4645_4C49_4E45
    /// Whether every insight gets its interval (the `/insights` answer shows them all); when
    /// false, only a change worse by at least the threshold does (the interval decides nothing
    /// else), which is what Apple's shape and the gauges need, at a fraction of the cost.
    package var intervalsForAll = true

    package init(
        percentiles: [Double] = [0.5, 0.9], resamples: Int = 1000, confidence: Double = 0.95,
        minimumDeviceDays: UInt64 = 100, thresholdPercent: Double = 10, highImpactPercent: Double = 100,
        seed: UInt64 = 0x4C49_4645_4C49_4E45
    ) {
        self.percentiles = percentiles
        self.resamples = resamples
        self.confidence = confidence
        self.minimumDeviceDays = minimumDeviceDays
        self.thresholdPercent = thresholdPercent
        self.highImpactPercent = highImpactPercent
        self.seed = seed
    }
}

/// What an insight says about its metric.
package enum InsightClassification: String, Sendable, Equatable, Codable {
    /// Worse by at least the threshold, and the interval excludes 0.
    case regression
    /// Worse by at least the threshold, but the interval touches 0.
    case trendingUp = "trending_up"
    /// Fewer device-days than the minimum on either side, or no reference version.
    case insufficientData = "insufficient_data"
    /// Nothing to report (better, unchanged, a change below the threshold, or no defined delta).
    case none
}

/// A bootstrap confidence interval of a delta, in percent. Bounds may be infinite when a resampled
/// reference value is 0.
package struct DeltaInterval: Sendable, Equatable {
    package var lower: Double
    package var upper: Double

    package init(lower: Double, upper: Double) {
        self.lower = lower
        self.upper = upper
    }

    /// Whether 0 lies inside the interval (bounds included).
    package var touchesZero: Bool { lower <= 0 && upper >= 0 }
}

/// The latest version against its reference versions, for one metric, population and percentile.
package struct Insight: Sendable, Equatable {
    package var metric: String
    /// The percentile as a fraction (0.5, 0.9).
    package var percentile: Double
    package var latestVersion: String
    package var referenceVersions: [String]
    /// The latest version's percentile across its device-days; `nil` with no device-day.
    package var latestValue: Double?
    /// The mean over reference versions of their percentile; `nil` without references.
    package var referenceValue: Double?
    /// `(latest − reference) / reference × 100`; `nil` when either side is missing or the
    /// reference is 0 (a percent change from 0 is undefined).
    package var deltaPercentage: Double?
    /// The bootstrap interval of the delta; `nil` when the delta is, or with insufficient data.
    package var confidenceInterval: DeltaInterval?
    /// Worse by at least ``InsightConfiguration/highImpactPercent``.
    package var highImpact: Bool
    package var classification: InsightClassification
    package var latestDeviceDays: UInt64
    /// Device-days of every reference version together.
    package var referenceDeviceDays: UInt64
}

/// Organizer-style insights with a bootstrap over device-days.
///
/// **Values.** For percentile `p`, the latest version's value is the `p`-quantile of its device-day
/// values (``QuantileSketch/quantile(_:)``) and the reference value is the mean, over the `N`
/// reference versions, of each version's `p`-quantile (Organizer's method: each version weighs the
/// same). `delta = (latest − reference) / reference × 100`.
///
/// **Interval.** A stratified percentile bootstrap: each replicate resamples the device-days of
/// every version with replacement (the payload is the independent unit, never the samples inside
/// its histograms), recomputes the percentiles and the delta, and the interval is the central
/// `confidence` of the replicate deltas. A replicate need not draw `n` values: the `k`-th smallest
/// of `n` draws from a distribution is `F⁻¹` of the `k`-th smallest of `n` uniforms, which is
/// Beta(`k`, `n − k + 1`), so each version's resampled percentile is one Beta draw and one binary
/// search in its buckets — the exact bootstrap distribution, at a cost independent of the number
/// of device-days: `resamples × versions × percentiles` draws (1,000 × 4 × 2 by default), no
/// subsampling needed. A seeded ``BootstrapRNG`` per metric and percentile makes it reproducible.
///
/// **Classification** (in the metric's worse direction, ``MetricDirection``):
/// `insufficient_data` when the latest version or any reference version has fewer than
/// ``InsightConfiguration/minimumDeviceDays``, or there is no reference; `regression` when the delta
/// is worse by at least ``InsightConfiguration/thresholdPercent`` and the interval lies entirely on
/// the worse side of 0; `trending_up` when it is worse by at least the threshold but the interval
/// touches 0; otherwise `none`. `high_impact` when worse by at least 100 %.
package enum InsightEngine {
    /// One insight per configured percentile.
    package static func evaluate(
        metric: String, population: String = "", direction: MetricDirection = .higherIsWorse,
        latest: VersionSample, references: [VersionSample], configuration: InsightConfiguration = .init()
    ) -> [Insight] {
        let latestTable = RankTable(latest.deviceDays)
        let referenceTables = references.map { RankTable($0.deviceDays) }
        let referenceDays = references.reduce(UInt64(0)) { $0.addingSaturating($1.deviceDays.count) }
        let enough =
            !references.isEmpty && latest.deviceDays.count >= configuration.minimumDeviceDays
            && references.allSatisfy { $0.deviceDays.count >= configuration.minimumDeviceDays }
        return configuration.percentiles.map { p in
            let q = p.isFinite ? min(max(p, 0), 1) : 0.5
            let latestValue = latest.deviceDays.quantile(q)
            let referenceValues = references.compactMap { $0.deviceDays.quantile(q) }
            let referenceValue =
                referenceValues.isEmpty || referenceValues.count < references.count
                ? nil : referenceValues.reduce(0, +) / Double(referenceValues.count)
            var insight = Insight(
                metric: metric, percentile: q, latestVersion: latest.version,
                referenceVersions: references.map(\.version), latestValue: latestValue,
                referenceValue: referenceValue, deltaPercentage: nil, confidenceInterval: nil, highImpact: false,
                classification: enough ? .none : .insufficientData, latestDeviceDays: latest.deviceDays.count,
                referenceDeviceDays: referenceDays)
            guard let latestValue, let referenceValue, referenceValue > 0 else { return insight }
            let delta = (latestValue - referenceValue) / referenceValue * 100
            insight.deltaPercentage = delta
            guard enough else { return insight }
            let worse = direction == .higherIsWorse ? delta : -delta
            insight.highImpact = worse >= configuration.highImpactPercent
            var rng = BootstrapRNG(
                seed: BootstrapRNG.derive(configuration.seed, "\(metric)\u{1F}\(population)\u{1F}\(q)"))
            guard configuration.intervalsForAll || worse >= configuration.thresholdPercent else { return insight }
            let interval = bootstrap(q, latestTable, referenceTables, configuration, &rng)
            insight.confidenceInterval = interval
            if worse >= configuration.thresholdPercent {
                let clear = direction == .higherIsWorse ? interval.lower > 0 : interval.upper < 0
                insight.classification = clear ? .regression : .trendingUp
            }
            return insight
        }
    }

    /// The central `confidence` interval of the replicate deltas.
    static func bootstrap(
        _ q: Double, _ latest: RankTable, _ references: [RankTable], _ configuration: InsightConfiguration,
        _ rng: inout BootstrapRNG
    ) -> DeltaInterval {
        let resamples = min(max(configuration.resamples, 100), 10_000)
        var deltas: [Double] = []
        deltas.reserveCapacity(resamples)
        for _ in 0..<resamples {
            let l = latest.resampledQuantile(q, &rng)
            var sum = 0.0
            for table in references { sum += table.resampledQuantile(q, &rng) }
            let r = sum / Double(references.count)
            if r > 0 {
                deltas.append((l - r) / r * 100)
            } else {
                deltas.append(l > 0 ? .infinity : 0)
            }
        }
        deltas.sort()
        let confidence = configuration.confidence.isFinite ? min(max(configuration.confidence, 0.5), 0.999) : 0.95
        let tail = (1 - confidence) / 2
        let last = Double(deltas.count - 1)
        let lo = Int((tail * last).rounded(.down))
        let hi = Int(((1 - tail) * last).rounded(.up))
        return DeltaInterval(lower: deltas[lo], upper: deltas[min(hi, deltas.count - 1)])
    }
}

/// A sketch's sorted values as cumulative ranks, for the Beta-order-statistic resampling.
struct RankTable: Sendable {
    /// Device-days.
    let count: UInt64
    /// Exclusive upper ranks of the zero run then each bucket, ascending.
    private var ends: [UInt64] = []
    private var values: [Double] = []

    init(_ sketch: QuantileSketch) {
        count = sketch.count
        var end: UInt64 = 0
        if sketch.zeroCount > 0 {
            end = sketch.zeroCount
            ends.append(end)
            values.append(0)
        }
        for bucket in sketch.buckets {
            end = end.addingSaturating(bucket.count)
            ends.append(end)
            let value = QuantileSketch.value(ofIndex: bucket.index)
            values.append(min(max(value, sketch.min ?? 0), sketch.max ?? 0))
        }
    }

    /// The value of 0-based rank `rank`.
    func value(atRank rank: UInt64) -> Double {
        var lo = 0
        var hi = ends.count - 1
        guard hi >= 0 else { return 0 }
        while lo < hi {
            let mid = (lo + hi) / 2
            if rank < ends[mid] { hi = mid } else { lo = mid + 1 }
        }
        return values[lo]
    }

    /// The `q`-quantile (rank `⌊q(n − 1)⌋`) of one bootstrap resample of the `n` device-days:
    /// `F⁻¹(U)` with `U ~ Beta(k, n − k + 1)`, `k` the 1-based rank.
    func resampledQuantile(_ q: Double, _ rng: inout BootstrapRNG) -> Double {
        guard count > 0 else { return 0 }
        let n = Double(count)
        let k = (q * (n - 1)).rounded(.down) + 1
        let u = rng.nextBeta(k, n - k + 1)
        let position = (u * n).rounded(.up) - 1
        let rank = position <= 0 ? 0 : (position >= n - 1 ? count - 1 : UInt64(position))
        return value(atRank: rank)
    }
}
