import LifelineModel

/// A figure the query model can compute per group, for alert rules and exporters. Each case is
/// computed by ``Analyzer`` from the same rows as the HTTP endpoints, so no figure exists twice.
package indirect enum Measure: Sendable, Equatable, Hashable {
    /// Metric payloads (≈ device-days).
    case deviceDays
    /// Exit count, optionally of one state and/or reason.
    case exits(state: AppState?, reason: String?)
    /// Exits per 1,000 device-days.
    case exitRate(state: AppState?, reason: String?)
    /// Signpost count of one name (any category when `category` is nil).
    case signposts(category: String?, name: String)
    /// Diagnostics, optionally of one kind.
    case diagnostics(kind: DiagnosticKind?)
    /// Watchdog terminations (crash groups of kind `watchdog`).
    case watchdogTerminations
    /// Crash groups first seen inside the window (by `firstSeen`).
    case newCrashGroups
    /// A quantile (0…1) of a histogram.
    case percentile(HistogramSource, Double)
    /// Expiration-handler imbalance ratio, one value per handler (label `handler`).
    case handlerImbalanceRatio
    /// Expiration-handler imbalance (`entered − exited`), one value per handler.
    case handlerImbalance
    /// Restoration failures / attempts.
    case restorationErrorRate
    /// A figure of a metrics-explorer metric (catalog id) per group: `p50`, `p90`, `mean` or
    /// `device_days`; undefined below the explorer's 50 device-days. A metric with series (signpost
    /// hitch ratios) gives one value per series (label `subject`).
    case explorer(metric: String, statistic: ExplorerStatistic)
    /// The newest version's regression of a metric at a percentile (0.5, 0.9) against the versions
    /// before it (Insights): the delta in percent when its 95 % interval lies entirely on the worse
    /// side of 0, else 0; undefined with insufficient data. One value for every device, or one per
    /// device type when grouped by device (label `version`: the newest version).
    case regression(metric: String, percentile: Double)
    /// `numerator / denominator`; samples are the denominator's.
    case ratio(Measure, Measure)
    /// A measure scaled by a constant (e.g. 1,000 for per-mille).
    case scaled(Measure, Double)

    /// Whether computing it reads the metrics explorer's rows (``ReadFreshness/readsExplorer``).
    package var readsExplorer: Bool {
        switch self {
        case .explorer, .regression: true
        case .ratio(let numerator, let denominator): numerator.readsExplorer || denominator.readsExplorer
        case .scaled(let measure, _): measure.readsExplorer
        case .deviceDays, .exits, .exitRate, .signposts, .diagnostics, .watchdogTerminations, .newCrashGroups,
            .percentile, .handlerImbalanceRatio, .handlerImbalance, .restorationErrorRate:
            false
        }
    }
}

/// What ``Measure/explorer(metric:statistic:)`` reads of an explorer row.
package enum ExplorerStatistic: String, Sendable, Equatable, Hashable, CaseIterable {
    case p50
    case p90
    case mean
    case deviceDays = "device_days"

    /// The figure of `row` (`nil` when the row has insufficient data, except device-days).
    package func value(_ row: ExplorerRow) -> Double? {
        switch self {
        case .p50: row.p50
        case .p90: row.p90
        case .mean: row.mean
        case .deviceDays: Double(row.deviceDays)
        }
    }
}
