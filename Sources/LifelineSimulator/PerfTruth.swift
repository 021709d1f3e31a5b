import Foundation

/// The performance truth of one version and metric: the law its values were drawn from, the
/// factor applied, and the p50 and p90 Lifeline should find.
///
/// **What the percentiles are of.** Histogram metrics (launch, resume and hang times): of every
/// sample of the version (the explorer merges the device-days' histograms and interpolates in the
/// buckets). The others (peak memory, daily writes, CPU time, hitch ratio): across the version's
/// device-days, one value each (the explorer's `QuantileSketch`).
package struct PerfTruthRow: Sendable, Equatable {
    package var version: String
    package var metric: PerfMetric
    /// What every value was multiplied by (1 unless the scenario regressed it).
    package var factor: Double
    /// The law of one baseline value, before the factor.
    package var distribution: PerfDistribution

    /// The expected `q`-quantile, in the metric's canonical unit (``PerfMetric/unit``).
    package func expected(_ q: Double) -> Double {
        distribution.quantile(q, factor: factor)
    }

    /// The expected p50.
    package var p50: Double { expected(0.5) }
    /// The expected p90.
    package var p90: Double { expected(0.9) }

    /// How far a measured `q`-quantile of `count` values (samples for histogram metrics,
    /// device-days for the others) may lie from ``expected(_:)``: 1 % of it (the sketch's relative
    /// accuracy), plus the sampling error at four standard errors
    /// (``PerfDistribution/samplingError(_:count:factor:)``: a miss has odds under 1 in 15,000),
    /// plus, for histogram metrics, half a bucket and 1 ms (the buckets and the whole milliseconds
    /// written).
    package func tolerance(_ q: Double, count: Int) -> Double {
        let expected = expected(q)
        var tolerance = 0.01 * expected + distribution.samplingError(q, count: count, factor: factor)
        if metric.isHistogram { tolerance += Double(metric.bucketWidth) / 2 + 1 }
        return tolerance
    }
}

/// The performance truth of a whole simulation: every version × every ``PerfMetric``. It depends
/// on the configuration only (the laws are fixed; the scenario sets the factors), so it is known
/// before anything is generated.
package struct PerfTruth: Sendable, Equatable {
    /// Versions in configuration order, metrics in ``PerfMetric`` order.
    package var rows: [PerfTruthRow]

    package init(config: SimulationConfig) {
        rows = config.versions.flatMap { version in
            PerfMetric.allCases.map { metric in
                PerfTruthRow(
                    version: version, metric: metric, factor: config.factor(metric, version: version),
                    distribution: metric.baseline)
            }
        }
    }

    /// The row of `version` and `metric`.
    package subscript(version: String, metric: PerfMetric) -> PerfTruthRow? {
        rows.first { $0.version == version && $0.metric == metric }
    }

    /// A fixed-width table (display units: ms, s, MB, ms/s), headed by a line that says what the
    /// percentiles are of.
    package func table() -> String {
        func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
        func value(_ x: Double, _ metric: PerfMetric) -> String {
            let shown = x * metric.display.scale
            return String(format: shown >= 100 ? "%.0f" : "%.1f", shown)
        }
        var lines = [
            "performance truth, by version and metric (p50/p90 of every sample for launch, resume and hang "
                + "times; across device-days for the others):",
            [pad("version", 10), pad("metric", 18), pad("factor", 8), pad("p50", 10), pad("p90", 10), "  unit  law"]
                .joined(),
        ]
        for row in rows {
            let display = row.metric.display
            lines.append(
                [
                    pad(row.version, 10), pad(row.metric.rawValue, 18), pad(String(format: "%.2f", row.factor), 8),
                    pad(value(row.p50, row.metric), 10), pad(value(row.p90, row.metric), 10),
                    "  " + display.unit.padding(toLength: 6, withPad: " ", startingAt: 0),
                    row.distribution.describe(scale: display.scale, unit: display.unit),
                ]
                .joined())
        }
        return lines.joined(separator: "\n")
    }

    /// The truth of a run as JSON (`lifeline simulate --truth FILE`): the scenario, then per
    /// version the generated tallies of `fleet` and the performance rows (canonical units).
    package func json(config: SimulationConfig, fleet: FleetTruth) throws -> Data {
        let versions = config.versions.map { version in
            let tally = fleet.versions[version] ?? VersionTruth()
            return TruthFile.Version(
                version: version, deviceDays: tally.deviceDays, diagnosticPayloads: tally.diagnosticPayloads,
                diagnostics: tally.diagnostics, crashes: tally.crashes.values.reduce(0, +),
                watchdogDeviceDays: tally.watchdogDeviceDays,
                backgroundTaskAssertionTimeouts: tally.backgroundTaskAssertionTimeouts,
                handlerEntered: tally.handlerEntered, handlerExited: tally.handlerExited,
                restoreAttempts: tally.restoreAttempts, restoreFailures: tally.restoreFailures,
                metrics: rows.filter { $0.version == version }.map { row in
                    TruthFile.Metric(
                        metric: row.metric.rawValue, name: row.metric.metricName, unit: row.metric.unit,
                        percentilesOf: row.metric.isHistogram ? "samples" : "device_days",
                        law: row.distribution.describe(scale: 1, unit: row.metric.unit), factor: row.factor,
                        p50: row.p50, p90: row.p90)
                })
        }
        let file = TruthFile(
            scenario: config.scenario.rawValue,
            affectedVersion: config.scenario == .baseline ? nil : config.affectedVersion,
            regressionFactor: config.scenario == .perfRegression ? config.regressionFactor : nil,
            regressionMetrics: config.scenario == .perfRegression ? config.regressionMetrics.map(\.rawValue) : nil,
            seed: config.seed, versions: versions)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try encoder.encode(file)
    }
}

/// The shape of `--truth FILE`.
private struct TruthFile: Encodable {
    struct Version: Encodable {
        var version: String
        var deviceDays: Int
        var diagnosticPayloads: Int
        var diagnostics: [String: Int]
        var crashes: Int
        var watchdogDeviceDays: Int
        var backgroundTaskAssertionTimeouts: Int
        var handlerEntered: Int
        var handlerExited: Int
        var restoreAttempts: Int
        var restoreFailures: Int
        var metrics: [Metric]
    }

    struct Metric: Encodable {
        var metric: String
        var name: String
        var unit: String
        var percentilesOf: String
        var law: String
        var factor: Double
        var p50: Double
        var p90: Double
    }

    var scenario: String
    var affectedVersion: String?
    var regressionFactor: Double?
    var regressionMetrics: [String]?
    var seed: UInt64
    var versions: [Version]
}
