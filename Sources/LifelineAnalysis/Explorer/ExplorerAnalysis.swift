import Dispatch
import LifelineModel

/// One merged explorer cell of a read: the values of the scope's grouped dimensions (version, OS,
/// device; `nil` when not grouped), the metric, its series and app state, and the merged cell.
package struct ExplorerCellRow: Sendable, Equatable {
    package var key: GroupKey
    /// ``ExplorerMetric/id``.
    package var metric: String
    /// ``ExplorerObservation/subject`` (`""` for most metrics).
    package var subject: String
    /// `all` or an iOS 27 app state's key (``ExplorerExtractor/stateKey(_:)``).
    package var appState: String
    package var cell: ExplorerCell

    package init(key: GroupKey, metric: String, subject: String, appState: String, cell: ExplorerCell) {
        self.key = key
        self.metric = metric
        self.subject = subject
        self.appState = appState
        self.cell = cell
    }

    /// The key ``ExplorerQuery`` groups by (dimensions not grouped are `""`).
    package var cellKey: ExplorerCellKey {
        ExplorerCellKey(
            metric: metric, subject: subject, version: key.version ?? "", device: key.device ?? "",
            os: key.os ?? "", appState: appState)
    }
}

/// The insights of one read: the versions compared and one entry per metric, series, population
/// (`""` every device, else a device type) and percentile.
package struct InsightsAnswer: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var metric: ExplorerMetric
        package var subject: String
        /// `""`: every device; otherwise one device type.
        package var device: String
        package var insight: Insight
    }

    /// The newest version (or the one asked for); `nil` when the window holds no version.
    package var latest: String?
    /// The versions before it compared against, oldest first.
    package var references: [String]
    package var entries: [Entry]

    package init(latest: String?, references: [String], entries: [Entry]) {
        self.latest = latest
        self.references = references
        self.entries = entries
    }
}

/// The explorer's figures over a store's ``AggregateReader``.
extension Analyzer {
    /// `GET /v1/apps/{bundleId}/metrics`: the rows of `scope` (its days, filters and grouping by
    /// version, device, OS and app state), for `category` or every category.
    package func explorer(
        _ scope: Scope, category: ExplorerCategory? = nil, minimumDeviceDays: UInt64 = ExplorerRow.minimumDeviceDays
    ) async throws -> [ExplorerRow] {
        let metrics = category.map { ExplorerCatalog.metrics(in: $0).map(\.id) } ?? []
        let cells = try await reader.explorerCells(scope, metrics: metrics)
        return await OffPool.run {
            ExplorerAnalysis.rows(cells, scope: scope, category: category, minimumDeviceDays: minimumDeviceDays)
        }
    }

    /// `GET /v1/apps/{bundleId}/insights`: the newest version of `scope`'s window (or `latest`)
    /// against the mean of the `referenceCount` versions before it (version order,
    /// ``VersionOrder``), per metric and series, for every device and, with `byDevice`,
    /// per device type. Only the whole device-day (app state `all`) is compared. `metric`: that
    /// metric only (every metric when `nil`).
    package func insights(
        _ scope: Scope, latest: String? = nil, referenceCount: Int = 3, byDevice: Bool = false,
        metric: String? = nil, configuration: InsightConfiguration = .init()
    ) async throws -> InsightsAnswer {
        var grouped = scope
        grouped.groupBy = byDevice ? [.version, .device] : [.version]
        grouped.appStates = []
        let cells = try await reader.explorerCells(grouped, metrics: metric.map { [$0] } ?? [])
        return await OffPool.run {
            ExplorerAnalysis.insights(
                cells, latest: latest, referenceCount: referenceCount, byDevice: byDevice,
                configuration: configuration)
        }
    }
}

extension Analyzer {
    /// The figures of `GET /v1/apps/{bundleId}/perfPowerMetrics` from one read of the cells by
    /// version and device: the rows by version, the rows by version and device, and the insights
    /// for every device and per device type (the same answers as ``explorer(_:category:minimumDeviceDays:)``
    /// and ``insights(_:latest:referenceCount:byDevice:metric:configuration:)`` would give, for a
    /// third of the reading).
    package func perfPower(
        _ scope: Scope, latest: String?, referenceCount: Int, configuration: InsightConfiguration
    ) async throws -> (byVersion: [ExplorerRow], byVersionAndDevice: [ExplorerRow], insights: InsightsAnswer) {
        var read = scope.grouped(by: [.version, .device])
        read.appStates = []
        let cells = try await reader.explorerCells(read, metrics: [])
        return await OffPool.run {
            let byVersion = ExplorerAnalysis.rows(cells, scope: scope.grouped(by: [.version]), category: nil)
            let byDevice = ExplorerAnalysis.rows(cells, scope: scope.grouped(by: [.version, .device]), category: nil)
            let insights = ExplorerAnalysis.insights(
                cells, latest: latest, referenceCount: referenceCount, byDevice: true, configuration: configuration)
            return (byVersion, byDevice, insights)
        }
    }

    /// Explained and unexplained terminations per version and reason (``TerminationExplainer``):
    /// the exit counters of both states beside the diagnostics that explain them, read from the
    /// rollups and the crash groups' signatures. Versions in version order.
    package func terminations(_ scope: Scope) async throws -> [TerminationRow] {
        let byVersion = scope.grouped(by: [.version])
        let exits = try await reader.exits(byVersion).map {
            ExitTally(version: $0.key.version ?? "unknown", reason: $0.reason, count: $0.count)
        }
        let diagnostics = try await reader.diagnostics(byVersion)
        let groups = Dictionary(
            try await reader.crashGroups(app: scope.app, ids: Array(Set(diagnostics.map(\.crashGroup)))).map {
                ($0.id, $0)
            }, uniquingKeysWith: { a, _ in a })
        let tallies = diagnostics.map { row in
            let group = groups[row.crashGroup]
            return DiagnosticTally(
                version: row.key.version ?? "unknown", kind: row.kind, exceptionType: group?.exceptionType,
                signal: group?.signal,
                isWatchdog: group?.groupKind == "watchdog"
                    || (group?.terminationReason.map(TerminationExplainer.namesWatchdog) ?? false),
                terminationCategory: group?.terminationCategory, count: row.count)
        }
        return TerminationExplainer.explain(exits: exits, diagnostics: tallies).sorted {
            $0.version != $1.version ? VersionOrder.precedes($0.version, $1.version) : $0.reason < $1.reason
        }
    }
}

/// Runs CPU-bound work (merging thousands of cells, the bootstrap's replicates) on a GCD thread:
/// Swift's cooperative pool has one thread per core, and a request computing on it for tens of
/// milliseconds (seconds in a debug build) holds every other request of the process.
package enum OffPool {
    package static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// The store-independent part of the explorer's answers.
package enum ExplorerAnalysis {
    /// The dimensions of `scope`'s grouping the explorer knows (`day` is refused at the edge).
    package static func dimensions(_ scope: Scope) -> Set<ExplorerDimension> {
        Set(scope.groupBy.compactMap { ExplorerDimension(rawValue: $0.rawValue) })
    }

    /// Whether the app-state key `state` is selected by the filter `filter` (`domain/label`, any
    /// metadata).
    package static func state(_ state: String, matches filter: String) -> Bool {
        state == filter || state.hasPrefix(filter + " ")
    }

    /// The rows of merged cells for `scope` (app states filtered as ``state(_:matches:)``).
    package static func rows(
        _ cells: [ExplorerCellRow], scope: Scope, category: ExplorerCategory?,
        minimumDeviceDays: UInt64 = ExplorerRow.minimumDeviceDays
    ) -> [ExplorerRow] {
        var filters: [ExplorerDimension: Set<String>] = [:]
        var kept = cells
        if !scope.appStates.isEmpty {
            kept = cells.filter { cell in scope.appStates.contains { state(cell.appState, matches: $0) } }
            filters[.appState] = Set(kept.map(\.appState))
        }
        return ExplorerQuery.rows(
            kept.map { (key: $0.cellKey, cell: $0.cell) }, groupBy: dimensions(scope), filters: filters,
            category: category, minimumDeviceDays: minimumDeviceDays)
    }

    /// Insights from cells grouped by version (and device with `byDevice`).
    package static func insights(
        _ cells: [ExplorerCellRow], latest: String?, referenceCount: Int, byDevice: Bool,
        configuration: InsightConfiguration
    ) -> InsightsAnswer {
        struct Series: Hashable {
            var metric: String
            var subject: String
            var device: String
        }
        var samples: [Series: [String: QuantileSketch]] = [:]
        var versions = Set<String>()
        for row in cells where row.appState == ExplorerExtractor.overallState {
            guard let version = row.key.version, ExplorerCatalog.metric(row.metric)?.direction != nil else { continue }
            versions.insert(version)
            let populations = byDevice ? ["", row.key.device ?? "unknown"] : [""]
            for device in populations {
                samples[Series(metric: row.metric, subject: row.subject, device: device), default: [:]][
                    version, default: QuantileSketch()
                ]
                .merge(row.cell.sketch)
            }
        }
        let ordered = versions.sorted(by: VersionOrder.precedes)
        guard let newest = latest ?? ordered.last, let position = ordered.firstIndex(of: newest) else {
            return InsightsAnswer(latest: latest, references: [], entries: [])
        }
        let references = Array(ordered[max(0, position - max(0, referenceCount))..<position])
        let order = Dictionary(
            ExplorerCatalog.metrics.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let series = samples.keys.sorted {
            (order[$0.metric, default: .max], $0.subject, $0.device) < (
                order[$1.metric, default: .max], $1.subject, $1.device
            )
        }
        var entries: [InsightsAnswer.Entry] = []
        for key in series {
            guard let metric = ExplorerCatalog.metric(key.metric), let direction = metric.direction,
                let byVersion = samples[key]
            else { continue }
            // A series the latest version did not report has nothing to compare.
            guard let latestSketch = byVersion[newest] else { continue }
            let population = key.subject.isEmpty ? key.device : key.subject + "\u{1F}" + key.device
            let insights = InsightEngine.evaluate(
                metric: key.metric, population: population, direction: direction,
                latest: VersionSample(version: newest, deviceDays: latestSketch),
                references: references.map {
                    VersionSample(version: $0, deviceDays: byVersion[$0] ?? QuantileSketch())
                },
                configuration: configuration)
            for insight in insights {
                entries.append(.init(metric: metric, subject: key.subject, device: key.device, insight: insight))
            }
        }
        return InsightsAnswer(latest: newest, references: references, entries: entries)
    }
}
