import Crypto
import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineSimulator
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Logging
import PostgresNIO
import Testing

/// Every figure of a store, read through the seams, for the parity tests.
extension PostgresStoreTests {
    /// Every figure the API, report and alerts read, for comparing two stores.
    struct Figures: Equatable, Sendable {
        var apps: [AppInfo]
        var exitsByVersion: [ExitFigure]
        var exitsByDeviceAndOS: [ExitFigure]
        var exitsByDay: [ExitFigure]
        var handlers: [HandlerFigure]
        var restoration: [RestorationFigure]
        var restorationByDay: [RestorationFigure]
        var percentiles: [[PercentileFigure]]
        var filteredPercentiles: [PercentileFigure]
        var usage: [UsageRow]
        var signposts: [SignpostRow]
        var crashes: [String]
        var summary: SummaryFigure
        /// iOS 27 app states: per-state exits, hangs, usage, signposts and diagnostics, and a state filter.
        var exitsByAppState: [ExitFigure]
        var hangsByAppState: [PercentileFigure]
        var usageByAppState: [UsageRow]
        var signpostsByAppState: [SignpostRow]
        var diagnosticsByAppState: [String]
        var exitsInOneState: [ExitFigure]
        /// The metrics explorer (issue 26): every metric's rows by version, by device and OS, by
        /// app state and in one app state (no device-day minimum, floating figures to 9
        /// significant digits: the pooled sums may differ in their last bits with the merge order),
        /// and the insights of the newest version.
        var explorer: [String]
        var insights: [String]

        /// `value` to 9 significant digits, or `-`. Rounded to 12 digits first, so that two sums of
        /// the same terms in another order (within ~1e-15 of each other) print alike even when the
        /// exact value lies on a tie of the 9th digit (an integer mean of bytes ending in .5).
        static func text(_ value: Double?) -> String {
            value.map { String(format: "%.9g", Double(String(format: "%.12g", $0)) ?? $0) } ?? "-"
        }

        static func explorer(_ analyzer: Analyzer, _ scope: Scope) async throws -> [String] {
            var lines: [String] = []
            let states = try await analyzer.reader.usage(scope.grouped(by: [.appState])).compactMap {
                $0.key.appState.map { "\($0.domain)/\($0.label)" }
            }.sorted()
            var oneState = scope.grouped(by: [.version])
            oneState.appStates = Array(states.prefix(1))
            for grouped in [
                scope.grouped(by: [.version]), scope.grouped(by: [.device, .os]), scope.grouped(by: [.appState]),
                oneState,
            ] {
                for row in try await analyzer.explorer(grouped, minimumDeviceDays: 1) {
                    lines.append(
                        [
                            row.metric, row.subject ?? "", row.version ?? "", row.device ?? "", row.os ?? "",
                            row.appState ?? "", "\(row.deviceDays)", text(row.p50), text(row.p90), text(row.mean),
                            text(row.errorMargin), text(row.p50ErrorMargin), text(row.p90ErrorMargin),
                        ].joined(separator: " "))
                }
            }
            return lines
        }

        static func read(_ source: any AggregateSource) async throws -> Figures {
            try await AnalysisRunner(source: source).analyze { analyzer in
                let scope = Scope(
                    app: app, days: DayRange(from: "2026-09-25", to: "2026-10-20"))
                let sources = Analyzer.launchHistograms.map(\.source) + [Analyzer.hangHistogram]
                let os =
                    try await analyzer.reader.usage(scope.grouped(by: [.os])).compactMap(\.key.os).sorted().first ?? ""
                var filtered = scope.grouped(by: [.version])
                filtered.oses = [os]
                return Figures(
                    apps: try await analyzer.apps(),
                    exitsByVersion: try await analyzer.exits(scope.grouped(by: [.version])),
                    exitsByDeviceAndOS: try await analyzer.exits(scope.grouped(by: [.device, .os])),
                    exitsByDay: try await analyzer.exits(scope.grouped(by: [.day])),
                    handlers: try await analyzer.handlers(scope.grouped(by: [.version])),
                    restoration: try await analyzer.restoration(scope.grouped(by: [.version])),
                    restorationByDay: try await analyzer.restoration(scope.grouped(by: [.day])),
                    percentiles: try await sources.asyncMap {
                        try await analyzer.percentiles(scope.grouped(by: [.version]), source: $0)
                    },
                    filteredPercentiles: try await analyzer.percentiles(filtered, source: Analyzer.hangHistogram),
                    usage: try await analyzer.usage(scope.grouped(by: [.device])).sorted { $0.key < $1.key },
                    signposts: try await analyzer.signposts(scope.grouped(by: [.version])).sorted {
                        ($0.key, $0.category, $0.name) < ($1.key, $1.category, $1.name)
                    },
                    // Group ids are each store's own: compare by fingerprint.
                    crashes: try await analyzer.crashes(scope).map { crash in
                        var group = crash.group
                        group.id = 0
                        return
                            "\(group) \(crash.kind) \(crash.count) \(crash.countByVersion.sorted { $0.key < $1.key })"
                            + " \(crash.exceptionName ?? "-") \(crash.signalName ?? "-") \(crash.isWatchdog)"
                    }.sorted(),
                    summary: try await analyzer.summary(scope),
                    exitsByAppState: try await analyzer.exits(scope.grouped(by: [.appState, .version])),
                    hangsByAppState: try await analyzer.percentiles(
                        scope.grouped(by: [.appState]), source: Analyzer.hangHistogram),
                    usageByAppState: try await analyzer.reader.usage(scope.grouped(by: [.appState, .day])).sorted {
                        $0.key < $1.key
                    },
                    signpostsByAppState: try await analyzer.reader.signposts(
                        scope.grouped(by: [.appState]), categories: []
                    ).sorted { ($0.key, $0.category, $0.name) < ($1.key, $1.category, $1.name) },
                    // Group ids are each store's own: compared by count per kind and key.
                    diagnosticsByAppState: try await analyzer.reader.diagnostics(
                        scope.grouped(by: [.appState, .device])
                    )
                    .map { "\($0.key) \($0.kind) \($0.count)" }.sorted(),
                    exitsInOneState: try await { () async throws -> [ExitFigure] in
                        let states = try await analyzer.reader.usage(scope.grouped(by: [.appState])).compactMap {
                            $0.key.appState.map { "\($0.domain)/\($0.label)" }
                        }.sorted()
                        var one = scope.grouped(by: [.version])
                        one.appStates = Array(states.prefix(1))
                        return try await analyzer.exits(one)
                    }(),
                    explorer: try await explorer(analyzer, scope),
                    insights: try await analyzer.insights(
                        scope, referenceCount: 2, configuration: InsightConfiguration(minimumDeviceDays: 10)
                    ).entries.map { entry in
                        let i = entry.insight
                        return [
                            entry.metric.id, entry.subject, entry.device, "\(i.percentile)", i.latestVersion,
                            "\(i.referenceVersions)", text(i.latestValue), text(i.referenceValue),
                            text(i.deltaPercentage), text(i.confidenceInterval?.lower),
                            text(i.confidenceInterval?.upper), i.classification.rawValue,
                        ].joined(separator: " ")
                    })
            }
        }
    }
}
