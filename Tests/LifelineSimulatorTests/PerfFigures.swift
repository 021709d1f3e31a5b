import Foundation
import LifelineAnalysis
import LifelineModel
@testable import LifelineSimulator

/// The performance figures of a simulation's metric payloads, decoded by the server's decoder, per
/// version and ``PerfMetric``: what the explorer and Insights read. Keys are a version alone, or
/// `"<version> <format>"` (`"4.3.0 v2"`) with `byFormat`.
struct PerfFigures: Sendable {
    var byFormat = false
    /// One value per device-day: a scalar metric's value; for a histogram metric, the mean of the
    /// device-day's histogram (bucket midpoints), device-days without a sample left out.
    var deviceDays: [String: [PerfMetric: [Double]]] = [:]
    /// Histogram metrics: every device-day's buckets merged (start → count; legacy half-open
    /// bounds `start…start + width`, 2.0.0 ones converted).
    var buckets: [String: [PerfMetric: [Double: Int64]]] = [:]

    /// Adds one decoded metric payload.
    mutating func add(_ decoded: MetricPayload) {
        let payload = decoded.withLegacyBucketBounds
        let version = (payload.meta.appVersion ?? "") + (byFormat ? " \(payload.format.rawValue)" : "")
        for metric in PerfMetric.allCases {
            if metric.isHistogram {
                guard let histogram = payload.histograms.first(where: { $0.name == metric.metricName })?.histogram
                else { continue }
                var count: Int64 = 0
                var sum = 0.0
                for bucket in histogram.buckets {
                    guard let start = bucket.start, let end = bucket.end, bucket.count > 0 else { continue }
                    count += bucket.count
                    sum += (start + end) / 2 * Double(bucket.count)
                    buckets[version, default: [:]][metric, default: [:]][start, default: 0] += bucket.count
                }
                if count > 0 { deviceDays[version, default: [:]][metric, default: []].append(sum / Double(count)) }
            } else {
                let name = payload.format == .v2 ? metric.reportMetricName : metric.metricName
                if let value = payload.scalars.first(where: { $0.name == name })?.measurement.value {
                    deviceDays[version, default: [:]][metric, default: []].append(value)
                }
            }
        }
    }

    /// Adds the figures of another simulation's device-days.
    mutating func merge(_ other: PerfFigures) {
        for (version, metrics) in other.deviceDays {
            for (metric, values) in metrics { deviceDays[version, default: [:]][metric, default: []] += values }
        }
        for (version, metrics) in other.buckets {
            for (metric, counts) in metrics {
                buckets[version, default: [:]][metric, default: [:]].merge(counts, uniquingKeysWith: +)
            }
        }
    }

    /// The measured `q`-quantile of `metric` on `version`, and how many values it is of: of every
    /// sample (merged buckets, interpolated) for a histogram metric, else across device-days
    /// (`QuantileSketch`, 1 % relative accuracy), as the explorer computes them.
    func quantile(_ q: Double, _ metric: PerfMetric, version: String) -> (value: Double, count: Int)? {
        if metric.isHistogram {
            let width = Double(metric.bucketWidth)
            let distribution = BucketDistribution(
                (buckets[version]?[metric] ?? [:]).map {
                    BucketDistribution.Bucket(start: $0.key, end: $0.key + width, count: $0.value)
                })
            return distribution.percentile(q).map { ($0, Int(distribution.count)) }
        }
        let values = deviceDays[version]?[metric] ?? []
        return QuantileSketch(values).quantile(q).map { ($0, values.count) }
    }

    /// The device-days of `metric` on `version` as Insights take them.
    func sample(_ metric: PerfMetric, version: String) -> VersionSample {
        VersionSample(version: version, deviceDays: QuantileSketch(deviceDays[version]?[metric] ?? []))
    }
}

extension Simulation {
    /// The version device `device` runs on day `day`.
    func version(device: Int, day: Int) -> String {
        config.versions[devices[device].versionIndex(day: day, config: config)]
    }

    /// The decoded performance figures of the device-days for which `include(version)` holds.
    func perfFigures(byFormat: Bool = false, where include: (String) -> Bool = { _ in true }) throws -> PerfFigures {
        var figures = PerfFigures(byFormat: byFormat)
        for day in 0..<config.days {
            for device in 0..<config.devices where include(version(device: device, day: day)) {
                let payload = metricPayload(device: device, day: day)
                guard case .metric(let metric) = try decode(payload).content else { continue }
                figures.add(metric)
            }
        }
        return figures
    }
}
