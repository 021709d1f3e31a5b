import LifelineAnalysis
import LifelineModel
import Prometheus

/// The product's figures as Prometheus gauges, computed at scrape time by ``Analyzer`` (the code
/// behind the query API and the alert rules) over a trailing window of UTC days.
///
/// Cardinality is bounded: per app, the `versionsPerApp` versions with the most device-days in
/// the window get their own `version` label and the rest are folded into `version="other"`
/// (computed over those versions together, not summed from rows); `state` and `reason` are
/// MetricKit's closed sets; `handler` is limited to the handlers found by the signpost naming
/// conventions; alerts are counted per rule.
struct ProductMetrics: Sendable {
    var analysis: AnalysisRunner
    /// Days in the window, ending today (UTC).
    var windowDays: Int
    var versionsPerApp: Int
    /// The window's last day; `nil` for today.
    var lastDay: UTCDay?

    static let other = "other"

    /// Adds every app's figures (only `onlyApp`'s when set) to `registry`, from one read
    /// transaction on the store's threads.
    func emit(into registry: PrometheusCollectorRegistry, today: UTCDay, onlyApp: String?) async throws {
        let days = DayRange(last: (lastDay ?? today).clamped, count: windowDays)
        registry.makeGauge(
            descriptor: .init(
                namespace: "lifeline", metricName: "metrics_window", unitName: "seconds",
                helpText:
                    "Length of the trailing window (whole UTC days, ending today) of the lifeline_app_* figures"),
            labels: []
        ).set(Double(windowDays) * 86_400)
        let this = self
        // The figures folded so far: a scrape does not wait for the aggregator's backlog.
        try await ReadFreshness.$waitsForFold.withValue(false) {
            try await analysis.analyze { analyzer in
                for app in try await analyzer.apps() where onlyApp == nil || app.bundleID == onlyApp {
                    try await this.emit(app: app.bundleID, days: days, analyzer: analyzer, into: registry)
                }
            }
        }
    }

    private func emit(
        app: String, days: DayRange, analyzer: Analyzer, into registry: PrometheusCollectorRegistry
    ) async throws {
        let scope = Scope(app: app, days: days)
        let usage = try await analyzer.usage(scope.grouped(by: [.version]))
        guard !usage.isEmpty else { return }
        let ranked = usage.sorted { ($1.payloads, $0.key.version ?? "") < ($0.payloads, $1.key.version ?? "") }
            .compactMap(\.key.version)
        let top = Array(ranked.prefix(versionsPerApp))
        let rest = Array(ranked.dropFirst(versionsPerApp))
        var groups: [(label: (GroupKey) -> String, scope: Scope)] = [
            ({ $0.version ?? "unknown" }, Scope(app: app, days: days, versions: top, groupBy: [.version]))
        ]
        if !rest.isEmpty { groups.append(({ _ in Self.other }, Scope(app: app, days: days, versions: rest))) }
        let gauges = Gauges(registry: registry)
        for (label, scope) in groups {
            for row in try await analyzer.usage(scope) {
                gauges.deviceDays(app, label(row.key)).set(Double(row.payloads))
            }
            for exit in try await analyzer.exits(scope) {
                let labels = [
                    ("app", app), ("version", label(exit.key)), ("state", exit.state.rawValue), ("reason", exit.reason),
                ]
                gauges.exits(labels).set(Double(exit.count))
                if let rate = exit.perThousandDeviceDays { gauges.exitRate(labels).set(rate) }
            }
            for handler in try await analyzer.handlers(scope) {
                let labels = [
                    ("app", app), ("version", label(handler.key)),
                    ("handler", "\(handler.category)/\(handler.handler)"),
                ]
                gauges.handlerImbalance(labels).set(Double(handler.imbalance))
                if let ratio = handler.imbalanceRatio { gauges.handlerImbalanceRatio(labels).set(ratio) }
                gauges.handlerFlagged(labels).set(handler.flagged ? 1.0 : 0.0)
            }
            // The metrics explorer's categories (terminations are the exit gauges above).
            for row in try await analyzer.explorer(scope) where row.category != .termination && row.subject == nil {
                let labels = [
                    ("app", app), ("version", label(GroupKey(version: row.version))),
                    ("category", row.category.rawValue), ("metric", row.metric), ("unit", row.unit.rawValue),
                ]
                gauges.explorer(labels + [("statistic", "device_days")]).set(Double(row.deviceDays))
                for (statistic, value) in [("p50", row.p50), ("p90", row.p90), ("mean", row.mean)] {
                    if let value { gauges.explorer(labels + [("statistic", statistic)]).set(value) }
                }
            }
            for restoration in try await analyzer.restoration(scope) {
                let labels = [("app", app), ("version", label(restoration.key))]
                gauges.restorationAttempts(labels).set(Double(restoration.attempts))
                if let rate = restoration.errorRate { gauges.restorationErrorRate(labels).set(rate) }
            }
        }
        // Crash groups: every group with occurrences in the window, counted per version label
        // (0 for a version without any, so "none" is a value, not a missing series).
        let labels = top + (rest.isEmpty ? [] : [Self.other])
        var crashGroups = Dictionary(uniqueKeysWithValues: labels.map { ($0, 0) })
        var crashes = Dictionary(uniqueKeysWithValues: labels.map { ($0, Int64(0)) })
        let topSet = Set(top)
        for crash in try await analyzer.crashes(scope) {
            var labelled = Set<String>()
            for (version, count) in crash.countByVersion {
                let label = topSet.contains(version) ? version : Self.other
                crashes[label, default: 0] += count
                labelled.insert(label)
            }
            for label in labelled { crashGroups[label, default: 0] += 1 }
        }
        for (version, count) in crashGroups {
            gauges.crashGroups([("app", app), ("version", version)]).set(Double(count))
        }
        for (version, count) in crashes { gauges.crashes([("app", app), ("version", version)]).set(Double(count)) }
        // Insights: the newest version against the versions before it (every device, metrics
        // without series), every percentile with a defined change, labelled with its classification.
        var configuration = InsightConfiguration()
        configuration.intervalsForAll = false  // the gauge is the delta: intervals only decide classes
        let insights = try await analyzer.insights(scope, configuration: configuration)
        for entry in insights.entries where entry.subject.isEmpty && entry.device.isEmpty {
            guard let delta = entry.insight.deltaPercentage, delta.isFinite else { continue }
            gauges.insightDelta([
                ("app", app), ("version", entry.insight.latestVersion), ("category", entry.metric.category.rawValue),
                ("metric", entry.metric.id), ("percentile", "p\(Int((entry.insight.percentile * 100).rounded()))"),
                ("classification", entry.insight.classification.rawValue),
            ]).set(delta)
        }
    }

    /// The gauge families, with their help texts.
    private struct Gauges {
        let registry: PrometheusCollectorRegistry

        private func gauge(_ name: String, _ help: String, _ labels: [(String, String)]) -> Gauge {
            registry.makeGauge(
                descriptor: .init(
                    namespace: "lifeline", subsystem: "app", metricName: name, unitName: "", helpText: help),
                labels: labels)
        }

        func deviceDays(_ app: String, _ version: String) -> Gauge {
            gauge(
                "metric_payloads", "Metric payloads in the window (one per device and day: device-days)",
                [("app", app), ("version", version)])
        }
        func exits(_ labels: [(String, String)]) -> Gauge {
            gauge(
                "exits", "App exits in the window by state and reason (MXForegroundExitData / MXBackgroundExitData)",
                labels)
        }
        func exitRate(_ labels: [(String, String)]) -> Gauge {
            gauge("exit_rate", "App exits per 1,000 device-days (metric payloads) in the window", labels)
        }
        func explorer(_ labels: [(String, String)]) -> Gauge {
            gauge(
                "metric",
                "Metrics explorer figure in the window: p50, p90, mean or device_days of a metric (unit label: "
                    + "its unit; rows under 50 device-days give device_days only)", labels)
        }
        func insightDelta(_ labels: [(String, String)]) -> Gauge {
            gauge(
                "insight_delta_percent",
                "Insights: the newest version's change of a metric percentile against the versions before it, "
                    + "in percent (classification: regression, trending_up, insufficient_data or none)", labels)
        }
        func handlerImbalance(_ labels: [(String, String)]) -> Gauge {
            gauge("handler_imbalance", "Expiration-handler signposts entered minus exited in the window", labels)
        }
        func handlerImbalanceRatio(_ labels: [(String, String)]) -> Gauge {
            gauge("handler_imbalance_ratio", "Expiration-handler imbalance / entered in the window", labels)
        }
        func handlerFlagged(_ labels: [(String, String)]) -> Gauge {
            gauge("handler_flagged", "1 when the expiration handler is flagged (imbalance above the threshold)", labels)
        }
        func restorationAttempts(_ labels: [(String, String)]) -> Gauge {
            gauge("restoration_attempts", "State-restoration attempts in the window", labels)
        }
        func restorationErrorRate(_ labels: [(String, String)]) -> Gauge {
            gauge("restoration_error_rate", "State-restoration failures / attempts in the window", labels)
        }
        func crashGroups(_ labels: [(String, String)]) -> Gauge {
            gauge("crash_groups", "Crash groups (all diagnostic kinds) with occurrences in the window", labels)
        }
        func crashes(_ labels: [(String, String)]) -> Gauge {
            gauge("diagnostics", "Diagnostics (crashes, hangs, CPU, disk-write, launch) in the window", labels)
        }
    }
}
