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
    /// `numerator / denominator`; samples are the denominator's.
    case ratio(Measure, Measure)
    /// A measure scaled by a constant (e.g. 1,000 for per-mille).
    case scaled(Measure, Double)
}
