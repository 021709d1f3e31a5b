import Foundation
import LifelineAlerts
import LifelineAlertState
import LifelineAnalysis
import LifelineModel

/// Everything one report shows, for one app and window, computed by ``Analyzer`` (the figures of
/// the HTTP API) and read from the alert state. Rendered by ``ReportHTML``, ``ReportMarkdown``
/// and ``ReportJSON``; the dashboard page renders the same sections live.
package struct Report: Sendable {
    /// What to report on.
    package struct Request: Sendable, Equatable {
        package var app: String
        package var days: DayRange
        /// Restrict to these app versions (all when empty).
        package var versions: [String] = []
        /// Compare two versions: `base..target`.
        package var compare: VersionPair?
        /// How many crash groups to list.
        package var topCrashes = 10

        package init(
            app: String, days: DayRange, versions: [String] = [], compare: VersionPair? = nil, topCrashes: Int = 10
        ) {
            self.app = app
            self.days = days
            self.versions = versions
            self.compare = compare
            self.topCrashes = topCrashes
        }

        /// The scope of the request: the app, window and version filter.
        package var scope: Scope { Scope(app: app, days: days, versions: versions) }
    }

    /// `base..target`, e.g. `4.1.0..4.2.0`.
    package struct VersionPair: Sendable, Equatable {
        package var base: String
        package var target: String

        package init(base: String, target: String) {
            self.base = base
            self.target = target
        }

        /// Parses `A..B`; `nil` when it is not two non-empty versions.
        package init?(_ text: String) {
            let parts = text.components(separatedBy: "..")
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[0] != parts[1] else { return nil }
            self.init(base: parts[0], target: parts[1])
        }
    }

    /// A named figure's value over the whole scope.
    package struct FigureValue: Sendable, Equatable {
        package var figure: ReportFigure
        package var value: Double?
    }

    /// A figure of two versions side by side.
    package struct ComparisonRow: Sendable, Equatable {
        package var figure: ReportFigure
        package var base: Double?
        package var target: Double?
        /// `target − base`; `nil` when either is missing.
        package var delta: Double? {
            guard let base, let target else { return nil }
            return target - base
        }
    }

    /// A `--fail-on` condition and its outcome.
    package struct GateResult: Sendable, Equatable {
        package var condition: FailCondition
        package var value: Double?
        package var tripped: Bool
    }

    /// An alert of the app that fired inside the window, from the alert history.
    package struct FiredAlert: Sendable, Equatable {
        package var rule: String
        package var labels: [String: String]
        /// Epoch seconds.
        package var firedAt: Int64
        /// When it resolved, if it has (at any time before the report was made).
        package var resolvedAt: Int64?
        /// The value that made it fire.
        package var value: Double?

        /// `firing` or `resolved`.
        package var status: String { resolvedAt == nil ? "firing" : "resolved" }
    }

    /// One launch histogram's percentiles per version.
    package struct LaunchSeries: Sendable, Equatable {
        package var name: String
        package var rows: [PercentileFigure]
    }

    package var request: Request
    /// When the report was made (epoch seconds, UTC).
    package var generatedAt: Int64
    /// App versions in scope, oldest first.
    package var versions: [String]
    package var summary: [FigureValue]
    /// Exits per version, state and reason.
    package var exits: [ExitFigure]
    /// Handlers per version.
    package var handlers: [HandlerFigure]
    package var restorationByVersion: [RestorationFigure]
    package var restorationByDay: [RestorationFigure]
    /// Most frequent crash groups first.
    package var crashes: [CrashFigure]
    /// All crash groups in scope (the list is cut at `topCrashes`).
    package var crashGroupCount: Int
    package var launch: [LaunchSeries]
    package var hangs: [PercentileFigure]
    /// iOS 27 data: exits and hang percentiles per app state (empty without app states in scope).
    package var exitsByAppState: [ExitFigure] = []
    package var hangsByAppState: [PercentileFigure] = []
    /// The app's own binaries in its diagnostics with no debug symbols, most diagnostics first
    /// (all time, not only the window: a missing dSYM matters whenever it was).
    package var missingSymbols: [MissingSymbols] = []
    /// The metrics explorer's rows by version, every category (issue 26).
    package var explorer: [ExplorerRow] = []
    /// The newest version against the versions before it.
    package var insights = InsightsAnswer(latest: nil, references: [], entries: [])
    /// Explained and unexplained terminations per version and reason.
    package var terminations: [TerminationRow] = []
    /// Alerts of the app that fired inside the window (resolved or not), newest first.
    package var alerts: [FiredAlert]
    package var comparison: [ComparisonRow]
    package var gates: [GateResult]

    /// Whether any `--fail-on` condition tripped.
    package var failed: Bool { gates.contains { $0.tripped } }
}

/// Builds a ``Report`` from the query model: every figure from ``Analyzer`` in one read
/// transaction of an ``AggregateSource``, fired alerts from an ``AlertStateStore``'s history.
/// The report imports no store: any store implementing those two protocols serves.
package struct ReportBuilder: Sendable {
    package var analysis: AnalysisRunner
    /// The alert history; nil for a store that keeps none (the report's alert list stays empty).
    package var alerts: any AlertStateStore
    package var figures: [ReportFigure]

    package init(analysis: AnalysisRunner, alerts: any AlertStateStore) {
        self.analysis = analysis
        self.alerts = alerts
        self.figures = ReportFigure.standard(analysis.conventions)
    }

    /// Computes the report; `progress` is told each section as it starts.
    package func build(
        _ request: Report.Request, gates: [FailCondition] = [], now: Int64,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> Report {
        progress("alerts")
        let alerts = try await firedAlerts(app: request.app, days: request.days)
        let figures = self.figures
        return try await analysis.analyze { analyzer in
            try await Self.build(
                request, gates: gates, now: now, alerts: alerts, figures: figures, analyzer: analyzer,
                progress: progress)
        }
    }

    private static func build(
        _ request: Report.Request, gates: [FailCondition], now: Int64, alerts: [Report.FiredAlert],
        figures: [ReportFigure], analyzer: Analyzer, progress: (String) -> Void
    ) async throws -> Report {
        let scope = request.scope
        let byVersion = scope.grouped(by: [.version])
        progress("summary")
        let summary = try await figures.asyncMap {
            Report.FigureValue(figure: $0, value: try await $0.value(analyzer, scope))
        }
        progress("exits")
        let exits = try await analyzer.exits(byVersion)
        progress("expiration handlers")
        let handlers = try await analyzer.handlers(byVersion)
        progress("state restoration")
        let restorationByVersion = try await analyzer.restoration(byVersion)
        let restorationByDay = try await analyzer.restoration(scope.grouped(by: [.day]))
        progress("crashes")
        let crashes = try await analyzer.crashes(scope)
        progress("launch and hangs")
        let launch = try await Analyzer.launchHistograms.asyncMap {
            Report.LaunchSeries(name: $0.name, rows: try await analyzer.percentiles(byVersion, source: $0.source))
        }
        let hangs = try await analyzer.percentiles(byVersion, source: Analyzer.hangHistogram)
        progress("app states")
        let byState = scope.grouped(by: [.appState])
        let exitsByAppState = try await analyzer.exits(byState)
        let hangsByAppState = try await analyzer.percentiles(byState, source: Analyzer.hangHistogram)
        progress("metrics explorer")
        let explorer = try await analyzer.explorer(byVersion)
        progress("insights")
        let insights = try await analyzer.insights(scope)
        progress("terminations")
        let terminations = try await analyzer.terminations(scope)
        progress("missing symbols")
        let missingSymbols = try await analyzer.reader.missingSymbols(app: request.app, limit: 20)
        var comparison: [Report.ComparisonRow] = []
        if let pair = request.compare {
            progress("comparison \(pair.base)..\(pair.target)")
            comparison = try await figures.asyncMap { figure in
                Report.ComparisonRow(
                    figure: figure, base: try await figure.value(analyzer, version(pair.base, of: scope)),
                    target: try await figure.value(analyzer, version(pair.target, of: scope)))
            }
        }
        // Gates judge the target version when comparing, else the whole scope.
        let gateScope = request.compare.map { version($0.target, of: scope) } ?? scope
        let gateResults = try await gates.asyncMap { gate in
            let value = try await ReportFigure.value(of: gate.measure, analyzer, gateScope)
            return Report.GateResult(condition: gate, value: value, tripped: gate.trips(value))
        }
        var versions = Set(exits.compactMap(\.key.version))
        versions.formUnion(restorationByVersion.compactMap(\.key.version))
        versions.formUnion(handlers.compactMap(\.key.version))
        var report = Report(
            request: request, generatedAt: now, versions: versions.sorted(by: VersionOrder.precedes),
            summary: summary, exits: exits, handlers: handlers, restorationByVersion: restorationByVersion,
            restorationByDay: restorationByDay, crashes: Array(crashes.prefix(request.topCrashes)),
            crashGroupCount: crashes.count, launch: launch, hangs: hangs, alerts: alerts, comparison: comparison,
            gates: gateResults)
        report.exitsByAppState = exitsByAppState
        report.hangsByAppState = hangsByAppState.filter { $0.samples > 0 }
        report.missingSymbols = missingSymbols
        report.explorer = explorer
        report.insights = insights
        report.terminations = terminations
        return report
    }

    private static func version(_ version: String, of scope: Scope) -> Scope {
        var copy = scope
        copy.versions = [version]
        return copy
    }

    /// Alerts labelled with the app that became firing between the window's first and last second,
    /// read from the alert history (kept 30 days by the evaluator), with when they resolved.
    private func firedAlerts(app: String, days: DayRange) async throws -> [Report.FiredAlert] {
        let start = days.from.startEpochSeconds
        let end = days.to.advanced(by: 1).startEpochSeconds
        let history = try await alerts.alertHistory(since: start, limit: 100_000).reversed()  // oldest first
        var alerts: [Report.FiredAlert] = []
        for (index, transition) in history.enumerated()
        where transition.to == .firing && transition.at < end && transition.labels["app"] == app {
            let resolved = history.dropFirst(index + 1).first {
                $0.fingerprint == transition.fingerprint && $0.rule == transition.rule && $0.to == .resolved
            }
            alerts.append(
                Report.FiredAlert(
                    rule: transition.rule, labels: transition.labels, firedAt: transition.at,
                    resolvedAt: resolved?.at, value: transition.value))
        }
        return alerts.sorted { ($0.firedAt, $0.rule) > ($1.firedAt, $1.rule) }
    }
}
