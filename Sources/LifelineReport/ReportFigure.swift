import LifelineAnalysis
import LifelineModel

/// A named figure of the report: its summary, the version comparison and `--fail-on` all use
/// these names. Each is a ``Measure``, so ``Analyzer`` computes it exactly as alert rules do.
package struct ReportFigure: Sendable, Equatable {
    /// How a value is written.
    package enum Format: Sendable, Equatable {
        /// A count (`12,345`).
        case count
        /// Per 1,000 device-days, two decimals.
        case perThousand
        /// A fraction shown as a percentage (`0.0123` → `1.23 %`).
        case fraction
        /// Milliseconds.
        case milliseconds
    }

    package var name: String
    package var title: String
    package var measure: Measure
    package var format: Format

    /// The figures every report carries, with the restoration signpost names of `conventions`.
    package static func standard(_ conventions: SignpostConventions) -> [ReportFigure] {
        let restoration = HistogramSource.signpost(
            category: conventions.restorationCategory, name: conventions.restorationAttempt)
        let launch = HistogramSource.metric("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey")
        return [
            ReportFigure(
                name: "device_days", title: "Device-days (metric payloads)", measure: .deviceDays, format: .count),
            ReportFigure(
                name: "exit_rate", title: "Exits per 1,000 device-days", measure: .exitRate(state: nil, reason: nil),
                format: .perThousand),
            ReportFigure(
                name: "background_exit_rate", title: "Background exits per 1,000 device-days",
                measure: .exitRate(state: .background, reason: nil), format: .perThousand),
            ReportFigure(
                name: "assertion_timeout_rate", title: "BackgroundTaskAssertionTimeout exits per 1,000 device-days",
                measure: .exitRate(state: .background, reason: Analyzer.assertionTimeoutReason), format: .perThousand),
            ReportFigure(
                name: "max_handler_imbalance_ratio", title: "Worst expiration-handler imbalance ratio",
                measure: .handlerImbalanceRatio, format: .fraction),
            ReportFigure(
                name: "restoration_error_rate", title: "State-restoration error rate",
                measure: .restorationErrorRate, format: .fraction),
            ReportFigure(
                name: "restoration_p95_ms", title: "State-restoration p95 duration",
                measure: .percentile(restoration, 0.95), format: .milliseconds),
            ReportFigure(
                name: "crash_rate", title: "Crashes per 1,000 device-days",
                measure: .scaled(.ratio(.diagnostics(kind: .crash), .deviceDays), 1_000), format: .perThousand),
            ReportFigure(
                name: "watchdog_terminations", title: "Watchdog terminations (0x8BADF00D)",
                measure: .watchdogTerminations, format: .count),
            ReportFigure(
                name: "launch_p95_ms", title: "Time to first draw, p95", measure: .percentile(launch, 0.95),
                format: .milliseconds),
            ReportFigure(
                name: "hang_p95_ms", title: "Hang duration, p95", measure: .percentile(Analyzer.hangHistogram, 0.95),
                format: .milliseconds),
        ]
    }

    /// The figure's value over the whole scope (no grouping): the largest value when the measure
    /// has one per handler; `nil` when nothing in scope defines it.
    package func value(_ analyzer: Analyzer, _ scope: Scope) async throws -> Double? {
        try await Self.value(of: measure, analyzer, scope)
    }

    package static func value(of measure: Measure, _ analyzer: Analyzer, _ scope: Scope) async throws -> Double? {
        try await analyzer.evaluate(measure, scope.grouped(by: [])).compactMap(\.value).max()
    }

    /// `value` written for people, in this figure's format.
    package func display(_ value: Double?) -> String {
        guard let value else { return "—" }
        switch format {
        case .count: return NumberText.grouped(value)
        case .perThousand: return NumberText.fixed(value, digits: 2)
        case .fraction: return NumberText.fixed(value * 100, digits: value != 0 && abs(value) < 0.001 ? 3 : 2) + " %"
        case .milliseconds: return NumberText.fixed(value, digits: value < 100 ? 1 : 0) + " ms"
        }
    }
}

/// Plain, locale-independent number formatting for the report (no Foundation formatters).
package enum NumberText {
    /// `value` with `digits` decimals (`1234.5` → `1,234.50`).
    package static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "∞" : "-∞") }
        // Past 10¹⁵ a double no longer holds every integer (and past 9.2·10¹⁸ not an Int64):
        // such a figure is written in exponent form instead of being converted.
        guard abs(value) < Self.largestGrouped else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64(scaled - Double(whole) * scale)
        var text = grouped(Int64(whole))
        if digits > 0 {
            let digitsText = String(fraction)
            text += "." + String(repeating: "0", count: max(0, digits - digitsText.count)) + digitsText
        }
        return (value < 0 && scaled > 0 ? "-" : "") + text
    }

    /// A whole number with thousands separators.
    package static func grouped(_ value: Double) -> String {
        value.isFinite && abs(value) < largestGrouped
            ? (value < 0 ? "-" : "") + grouped(Int64(abs(value).rounded())) : fixed(value, digits: 0)
    }

    /// Figures at or above this magnitude are written in exponent form.
    static let largestGrouped = 1e15

    static func grouped(_ value: Int64) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }
}
