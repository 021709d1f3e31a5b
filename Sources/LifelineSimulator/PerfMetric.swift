import Foundation
import LifelineModel

/// A performance figure the simulator draws for every device-day, and which the `perf-regression`
/// scenario can make worse. Both payload formats carry each one (legacy `MXMetricPayload` and the
/// iOS 27 `MetricReport`), drawn the same way, so Lifeline finds the same figures in both.
package enum PerfMetric: String, Sendable, CaseIterable, Comparable {
    /// Time to first draw (`histogrammedTimeToFirstDrawKey`, `timeToFirstDrawMetric`).
    case launch
    /// Optimized (prewarmed) time to first draw.
    case optimizedLaunch = "optimized-launch"
    /// Resume time.
    case resume
    /// Hang time (`histogrammedAppHangTime`, `hangTimeMetric`).
    case hang
    /// Peak memory of the day (`peakMemoryUsage`, `peakMemoryMetric`).
    case peakMemory = "peak-memory"
    /// Logical disk writes of the day (`cumulativeLogicalWrites`, `logicalDiskWritesMetric`).
    case diskWrites = "disk-writes"
    /// CPU time of the day (`cumulativeCPUTime`, `cpuTimeMetric`).
    case cpuTime = "cpu-time"
    /// Scroll hitch time ratio (`scrollHitchTimeRatio`; 2.0.0 `hitchTimeMetric.ratio`).
    case hitchRatio = "hitch-ratio"

    package static func < (lhs: PerfMetric, rhs: PerfMetric) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }

    /// What it is, for tables and `--help`.
    package var title: String {
        switch self {
        case .launch: "time to first draw"
        case .optimizedLaunch: "optimized time to first draw"
        case .resume: "resume time"
        case .hang: "hang time"
        case .peakMemory: "peak memory"
        case .diskWrites: "logical disk writes per day"
        case .cpuTime: "CPU time per day"
        case .hitchRatio: "scroll hitch time ratio"
        }
    }

    /// The metric's name once decoded (legacy names; the decoder maps 2.0.0 keys onto them).
    package var metricName: String {
        switch self {
        case .launch: "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"
        case .optimizedLaunch: "applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey"
        case .resume: "applicationLaunchMetrics.histogrammedResumeTime"
        case .hang: "applicationResponsivenessMetrics.histogrammedAppHangTime"
        case .peakMemory: "memoryMetrics.peakMemoryUsage"
        case .diskWrites: "diskIOMetrics.cumulativeLogicalWrites"
        case .cpuTime: "cpuMetrics.cumulativeCPUTime"
        case .hitchRatio: "animationMetrics.scrollHitchTimeRatio"
        }
    }

    /// The decoded name in a 2.0.0 report where it differs: `hitchTimeMetric` (all animations, not
    /// only scrolling) decodes to `animationMetrics.ratio`.
    package var reportMetricName: String {
        self == .hitchRatio ? "animationMetrics.ratio" : metricName
    }

    /// Whether each device-day carries a histogram of samples (launch, resume and hang times)
    /// rather than one value.
    package var isHistogram: Bool {
        switch self {
        case .launch, .optimizedLaunch, .resume, .hang: true
        case .peakMemory, .diskWrites, .cpuTime, .hitchRatio: false
        }
    }

    /// Width of the histogram buckets, ms (histogram metrics only).
    package var bucketWidth: Int64 {
        self == .hang ? 100 : 10
    }

    /// The baseline law of one value (a histogram sample, or a device-day's value), in the
    /// canonical unit of ``unit``. Per-device-day laws are narrow (σ(ln x) = 0.3) and independent
    /// across device-days, so a few hundred device-days per version resolve a 10 % change.
    package var baseline: PerfDistribution {
        switch self {
        case .launch: .logSpread(median: 300, width: 1.0)
        case .optimizedLaunch: .logSpread(median: 210, width: 1.2)
        case .resume: .logSpread(median: 140, width: 1.2)
        case .hang: .logSpread(median: 600, width: 1.2)
        case .peakMemory: .logSpread(median: 380e6, width: 0.6)
        case .diskWrites: .logSpread(median: 150e6, width: 0.6)
        case .cpuTime: .logSpread(median: 90_000, width: 0.6)
        // Whole ms/s as MetricKit writes them: most days smooth, one in six with a janky screen.
        // p50 (3) and p90 (10) sit inside wide steps (P(X ≤ 2, 3) = 0.30, 0.60; P(X ≤ 6, 10) =
        // 0.80, 0.97), so sampling does not move them.
        case .hitchRatio: .weighted(values: [0, 1, 2, 3, 4, 5, 6, 10, 16], weights: [5, 10, 15, 30, 12, 6, 2, 17, 3])
        }
    }

    /// The canonical unit Lifeline stores (`ms`, `bytes`, `ms_per_s`).
    package var unit: String {
        switch self {
        case .launch, .optimizedLaunch, .resume, .hang, .cpuTime: "ms"
        case .peakMemory, .diskWrites: "bytes"
        case .hitchRatio: "ms_per_s"
        }
    }

    /// How tables show it: the unit and the factor from the canonical unit.
    package var display: (unit: String, scale: Double) {
        switch self {
        case .launch, .optimizedLaunch, .resume, .hang: ("ms", 1)
        case .cpuTime: ("s", 0.001)
        case .peakMemory, .diskWrites: ("MB", 1e-6)
        case .hitchRatio: ("ms/s", 1)
        }
    }

    /// Parses `--regression-metrics`: `all` or comma-separated names; the unknown names otherwise
    /// (none when the list is empty).
    package static func parseList(_ text: String) -> Result<[PerfMetric], UnknownNames> {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if names == ["all"] { return .success(allCases) }
        var metrics: [PerfMetric] = []
        var unknown: [String] = []
        for name in names where !name.isEmpty {
            if let metric = PerfMetric(rawValue: name) {
                if !metrics.contains(metric) { metrics.append(metric) }
            } else {
                unknown.append(name)
            }
        }
        if !unknown.isEmpty || metrics.isEmpty { return .failure(UnknownNames(names: unknown)) }
        return .success(metrics.sorted())
    }

    /// Names `--regression-metrics` did not know (empty: the list was empty).
    package struct UnknownNames: Error, Equatable {
        package var names: [String]
    }
}

/// How a simulated value is drawn, with its quantiles (what Lifeline should find).
package enum PerfDistribution: Sendable, Equatable {
    /// `median × exp(width × (U₁ + U₂ + U₃ − 1.5))` with `Uᵢ` uniform on 0…1 (an Irwin–Hall sum: a
    /// bounded, log-normal-like law with σ(ln x) = width / 2, between `median × e^(±1.5 width)`).
    /// Histogram samples are then truncated to whole ms and counted in buckets.
    case logSpread(median: Double, width: Double)
    /// Whole numbers `values[i]` with probability `weights[i] / Σ weights`.
    case weighted(values: [Int], weights: [Int])

    /// One draw.
    func draw(_ rng: inout SplitMix64) -> Double {
        switch self {
        case .logSpread(let median, let width):
            return median * exp(width * (rng.unit() + rng.unit() + rng.unit() - 1.5))
        case .weighted(let values, let weights):
            var target = rng.int(in: 0...(weights.reduce(0, +) - 1))
            for (value, weight) in zip(values, weights) {
                if target < weight { return Double(value) }
                target -= weight
            }
            return Double(values.last ?? 0)
        }
    }

    /// The `q`-quantile of the values written when every draw is multiplied by `factor` (whole
    /// numbers rounded, as the builders do).
    package func quantile(_ q: Double, factor: Double = 1) -> Double {
        switch self {
        case .logSpread(let median, let width):
            return median * factor * exp(width * (IrwinHall.quantile(min(max(q, 0), 1)) - 1.5))
        case .weighted(let values, let weights):
            // The smallest value with P(X ≤ value) ≥ q.
            let total = Double(weights.reduce(0, +))
            var cumulative = 0
            for (value, weight) in zip(values, weights) {
                cumulative += weight
                if Double(cumulative) >= q * total - 1e-9 { return (Double(value) * factor).rounded() }
            }
            return (Double(values.last ?? 0) * factor).rounded()
        }
    }

    /// How far the empirical `q`-quantile of `count` values may stray by sampling: the largest
    /// distance from ``quantile(_:factor:)`` to the quantiles at `q ± 4√(q(1 − q)/n)` (four standard
    /// errors of the empirical distribution function at that point; for a continuous law about
    /// four standard errors of the quantile, `√(q(1 − q)/n) / f(x_q)`; for a whole-number law 0
    /// while `q` stays inside its step).
    package func samplingError(_ q: Double, count: Int, factor: Double = 1) -> Double {
        guard count > 0 else { return .infinity }
        let delta = 4 * (q * (1 - q) / Double(count)).squareRoot()
        let center = quantile(q, factor: factor)
        return max(
            abs(quantile(min(q + delta, 1), factor: factor) - center),
            abs(center - quantile(max(q - delta, 0), factor: factor)))
    }

    /// `"300 ms × e^(1(ΣU₃ − 1.5))"`-style text in display units.
    package func describe(scale: Double, unit: String) -> String {
        func number(_ x: Double) -> String {
            x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(format: "%g", x)
        }
        switch self {
        case .logSpread(let median, let width):
            return "\(number(median * scale)) \(unit) × e^(\(number(width))(ΣU₃−1.5))"
        case .weighted(let values, let weights):
            let total = weights.reduce(0, +)
            return zip(values, weights).map { "\($0.0):\($0.1)" }.joined(separator: " ") + " /\(total) \(unit)"
        }
    }
}

/// The sum of three independent uniforms on 0…1.
enum IrwinHall {
    /// P(S ≤ s).
    static func cdf(_ s: Double) -> Double {
        if s <= 0 { return 0 }
        if s >= 3 { return 1 }
        if s < 1 { return s * s * s / 6 }
        if s < 2 { return (-2 * s * s * s + 9 * s * s - 9 * s + 3) / 6 }
        let t = 3 - s
        return 1 - t * t * t / 6
    }

    /// The density at `s`.
    static func density(_ s: Double) -> Double {
        if s <= 0 || s >= 3 { return 0 }
        if s < 1 { return s * s / 2 }
        if s < 2 { return (-2 * s * s + 6 * s - 3) / 2 }
        return (3 - s) * (3 - s) / 2
    }

    /// The `q`-quantile, by bisection (60 halvings: exact to the last bits).
    static func quantile(_ q: Double) -> Double {
        var lo = 0.0
        var hi = 3.0
        for _ in 0..<60 {
            let mid = (lo + hi) / 2
            if cdf(mid) < q { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }
}
