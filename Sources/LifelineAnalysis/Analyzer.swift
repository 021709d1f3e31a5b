import LifelineModel

/// Computes every figure Lifeline shows, alerts on, exports or reports, from the rows of an
/// ``AggregateReader``. The one place where a figure is defined.
package struct Analyzer: Sendable {
    package let reader: any AggregateReader
    package var conventions: SignpostConventions
    package var handlerFlag: HandlerFlagRule

    package init(
        reader: any AggregateReader, conventions: SignpostConventions = .init(), handlerFlag: HandlerFlagRule = .init()
    ) {
        self.reader = reader
        self.conventions = conventions
        self.handlerFlag = handlerFlag
    }

    /// The exit reason of a background task that never ended.
    package static let assertionTimeoutReason = "BackgroundTaskAssertionTimeout"

    /// Launch histograms reported by the `launch` endpoint.
    package static let launchHistograms: [(name: String, source: HistogramSource)] = [
        ("time_to_first_draw", .metric("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey")),
        ("optimized_time_to_first_draw", .metric("applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey")),
        ("resume_time", .metric("applicationLaunchMetrics.histogrammedResumeTime")),
        ("extended_launch", .metric("applicationLaunchMetrics.histogrammedExtendedLaunch")),
    ]

    /// The name of the hang histogram's rows (API, report, exporter).
    package static let hangHistogramName = "app_hang_time"

    /// The hang histogram.
    package static let hangHistogram = HistogramSource.metric(
        "applicationResponsivenessMetrics.histogrammedAppHangTime")

    // MARK: Figures

    /// Apps with data.
    package func apps() async throws -> [AppInfo] { try await reader.apps() }

    /// Whether the store knows `bundleID`.
    package func hasApp(_ bundleID: String) async throws -> Bool { try await reader.hasApp(bundleID) }

    /// Device-days (metric payloads) and app time per group.
    package func usage(_ scope: Scope) async throws -> [UsageRow] { try await reader.usage(scope) }

    /// App versions with metric payloads in scope, oldest first (``VersionOrder``).
    package func versions(_ scope: Scope) async throws -> [String] {
        Set(try await reader.usage(scope.grouped(by: [.version])).compactMap(\.key.version)).sorted(
            by: VersionOrder.precedes)
    }

    /// Signpost counts per group, category and name.
    package func signposts(_ scope: Scope) async throws -> [SignpostRow] {
        try await reader.signposts(scope, categories: []).sorted(byKey: \.key) {
            ($0.category, $0.name) < ($1.category, $1.name)
        }
    }

    /// The headline figures of a scope (`/summary`, the report's and the dashboard's first lines).
    package func summary(_ scope: Scope) async throws -> SummaryFigure {
        let total = scope.grouped(by: [])
        let deviceDays = try await reader.usage(total).lazy.map(\.payloads).saturatingSum()
        let exits = try await exits(total)
        func sum(_ state: AppState) -> Int64 { exits.lazy.filter { $0.state == state }.map(\.count).saturatingSum() }
        let restoration = try await restoration(total).first
        let diagnostics = try await reader.diagnostics(total)
        var byKind: [DiagnosticKind: Int64] = [:]
        for kind in DiagnosticKind.allCases { byKind[kind] = 0 }
        for row in diagnostics { byKind[row.kind, default: 0].addSaturating(row.count) }
        return SummaryFigure(
            deviceDays: deviceDays, foregroundExits: sum(.foreground), backgroundExits: sum(.background),
            restorationAttempts: restoration?.attempts ?? 0, restorationFailures: restoration?.failures ?? 0,
            restorationErrorRate: restoration?.errorRate,
            flaggedHandlers: try await handlers(total).filter(\.flagged).map(\.handler),
            diagnostics: byKind, crashGroups: Set(diagnostics.map(\.crashGroup)).count)
    }

    /// Exits per group, state and reason, with rates per 1,000 device-days and per hour.
    package func exits(_ scope: Scope) async throws -> [ExitFigure] {
        let usage = Dictionary(try await reader.usage(scope).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        return try await reader.exits(scope).map { row in
            let use = usage[row.key]
            let deviceDays = use?.payloads ?? 0
            let milliseconds = row.state == .foreground ? use?.foregroundMilliseconds : use?.backgroundMilliseconds
            return ExitFigure(
                key: row.key, state: row.state, reason: row.reason, count: row.count, deviceDays: deviceDays,
                perThousandDeviceDays: deviceDays > 0 ? Double(row.count) / Double(deviceDays) * 1000 : nil,
                perHour: milliseconds.flatMap { $0 > 0 ? Double(row.count) / ($0 / 3_600_000) : nil })
        }.sorted(byKey: \.key) { ($0.state.rawValue, $0.reason) < ($1.state.rawValue, $1.reason) }
    }

    /// Expiration handlers found by the naming conventions, with their balance per group.
    package func handlers(_ scope: Scope) async throws -> [HandlerFigure] {
        struct Side {
            var entered: Int64 = 0
            var exited: Int64 = 0
        }
        var sides: [GroupKey: [HandlerID: Side]] = [:]
        for row in try await reader.signposts(scope, categories: conventions.handlerCategories) {
            guard let (handler, side) = conventions.handler(category: row.category, name: row.name) else { continue }
            let id = HandlerID(category: row.category, handler: handler)
            switch side {
            case .entered: sides[row.key, default: [:]][id, default: Side()].entered.addSaturating(row.count)
            case .exited: sides[row.key, default: [:]][id, default: Side()].exited.addSaturating(row.count)
            }
        }
        var timeouts: [GroupKey: Int64] = [:]
        for row in try await reader.exits(scope)
        where row.state == .background && row.reason == Self.assertionTimeoutReason {
            timeouts[row.key, default: 0].addSaturating(row.count)
        }
        var figures: [HandlerFigure] = []
        for (key, handlers) in sides {
            for (id, side) in handlers {
                let imbalance = side.entered.addingSaturating(side.exited == .min ? .max : -side.exited)
                let ratio = side.entered > 0 ? Double(imbalance) / Double(side.entered) : nil
                let flagged =
                    side.entered >= handlerFlag.minEntered && (ratio ?? 0) > handlerFlag.maxImbalanceRatio
                figures.append(
                    HandlerFigure(
                        key: key, category: id.category, handler: id.handler, entered: side.entered,
                        exited: side.exited, imbalance: imbalance, imbalanceRatio: ratio, flagged: flagged,
                        assertionTimeoutExits: timeouts[key] ?? 0))
            }
        }
        return figures.sorted(byKey: \.key) { ($0.category, $0.handler) < ($1.category, $1.handler) }
    }

    private struct HandlerID: Hashable {
        var category: String
        var handler: String
    }

    /// State-restoration attempts, failures, error rate and duration percentiles per group.
    package func restoration(_ scope: Scope) async throws -> [RestorationFigure] {
        var counts: [GroupKey: (attempts: Int64, failures: Int64)] = [:]
        for row in try await reader.signposts(scope, categories: [conventions.restorationCategory]) {
            if row.name == conventions.restorationAttempt {
                counts[row.key, default: (0, 0)].attempts.addSaturating(row.count)
            } else if row.name == conventions.restorationFailure {
                counts[row.key, default: (0, 0)].failures.addSaturating(row.count)
            }
        }
        let source = HistogramSource.signpost(
            category: conventions.restorationCategory, name: conventions.restorationAttempt)
        let distributions = try await distributions(scope, source: source)
        let keys = Set(counts.keys).union(distributions.keys)
        return keys.sorted().map { key in
            let c = counts[key] ?? (0, 0)
            let d = distributions[key]
            return RestorationFigure(
                key: key, attempts: c.attempts, failures: c.failures,
                errorRate: c.attempts > 0 ? Double(c.failures) / Double(c.attempts) : nil,
                p50Milliseconds: d?.percentile(0.5), p95Milliseconds: d?.percentile(0.95),
                durationSamples: d?.count ?? 0)
        }
    }

    /// p50/p90/p95/p99 of a histogram per group.
    package func percentiles(_ scope: Scope, source: HistogramSource) async throws -> [PercentileFigure] {
        try await distributions(scope, source: source).sorted { $0.key < $1.key }.map { key, d in
            PercentileFigure(
                key: key, source: source, samples: d.count, p50: d.percentile(0.5), p90: d.percentile(0.9),
                p95: d.percentile(0.95), p99: d.percentile(0.99))
        }
    }

    /// Merged bucket distributions per group.
    package func distributions(_ scope: Scope, source: HistogramSource) async throws -> [GroupKey: BucketDistribution] {
        var buckets: [GroupKey: [BucketDistribution.Bucket]] = [:]
        for row in try await reader.buckets(scope, source: source) {
            buckets[row.key, default: []].append(.init(start: row.start, end: row.end, count: row.count))
        }
        return buckets.mapValues { BucketDistribution($0) }
    }

    /// Crash groups (all diagnostic kinds) with their occurrences in scope, most frequent first.
    /// The scope's `groupBy` is ignored: counts per version are always given.
    package func crashes(_ scope: Scope) async throws -> [CrashFigure] {
        let rows = try await reader.diagnostics(scope.grouped(by: [.version]))
        var byGroup: [Int64: (kind: DiagnosticKind, total: Int64, versions: [String: Int64])] = [:]
        for row in rows {
            var entry = byGroup[row.crashGroup] ?? (row.kind, 0, [:])
            entry.total.addSaturating(row.count)
            entry.versions[row.key.version ?? "unknown", default: 0].addSaturating(row.count)
            byGroup[row.crashGroup] = entry
        }
        let infos = try await reader.crashGroups(app: scope.app, ids: Array(byGroup.keys))
        return infos.compactMap { info in
            guard let entry = byGroup[info.id] else { return nil }
            return CrashFigure(
                group: info, kind: entry.kind, count: entry.total, countByVersion: entry.versions,
                exceptionName: info.exceptionType.flatMap(exceptionTypeName),
                signalName: info.signal.flatMap(signalName),
                isWatchdog: info.groupKind == "watchdog")
        }.sorted { ($1.count, $0.group.id) < ($0.count, $1.group.id) }
    }

    // MARK: Measures

    /// Evaluates `measure` per group of `scope`.
    package func evaluate(_ measure: Measure, _ scope: Scope) async throws -> [MeasureValue] {
        switch measure {
        case .deviceDays:
            return try await reader.usage(scope).map {
                .init(key: $0.key, value: Double($0.payloads), samples: $0.payloads)
            }
        case .exits(let state, let reason):
            return sum(
                try await reader.exits(scope).filter { row in
                    (state == nil || row.state == state) && (reason == nil || row.reason == reason)
                }.map { ($0.key, $0.count) })
        case .exitRate(let state, let reason):
            return try await evaluate(.scaled(.ratio(.exits(state: state, reason: reason), .deviceDays), 1000), scope)
        case .signposts(let category, let name):
            return sum(
                try await reader.signposts(scope, categories: category.map { [$0] } ?? []).filter { $0.name == name }
                    .map { ($0.key, $0.count) })
        case .diagnostics(let kind):
            return sum(
                try await reader.diagnostics(scope).filter { kind == nil || $0.kind == kind }.map { ($0.key, $0.count) }
            )
        case .watchdogTerminations:
            let rows = try await reader.diagnostics(scope).filter { $0.kind == .crash }
            let watchdog = Set(
                try await reader.crashGroups(app: scope.app, ids: Array(Set(rows.map(\.crashGroup))))
                    .filter { $0.groupKind == "watchdog" }.map(\.id))
            return sum(rows.filter { watchdog.contains($0.crashGroup) }.map { ($0.key, $0.count) })
        case .newCrashGroups:
            let rows = try await reader.diagnostics(scope)
            let infos = try await reader.crashGroups(app: scope.app, ids: Array(Set(rows.map(\.crashGroup))))
            let from = scope.days.from.startEpochSeconds
            let fresh = Set(infos.filter { $0.firstSeen >= from }.map(\.id))
            var groups: [GroupKey: Set<Int64>] = [:]
            for row in rows where fresh.contains(row.crashGroup) { groups[row.key, default: []].insert(row.crashGroup) }
            return groups.sorted { $0.key < $1.key }.map {
                .init(key: $0.key, value: Double($0.value.count), samples: Int64($0.value.count))
            }
        case .percentile(let source, let q):
            return try await distributions(scope, source: source).sorted { $0.key < $1.key }.map {
                .init(key: $0.key, value: $0.value.percentile(q), samples: $0.value.count)
            }
        case .handlerImbalanceRatio, .handlerImbalance:
            return try await handlers(scope).map { figure in
                let value =
                    measure == .handlerImbalance ? Double(figure.imbalance) : figure.imbalanceRatio
                return .init(
                    key: figure.key, labels: ["handler": figure.handler, "category": figure.category], value: value,
                    samples: figure.entered)
            }
        case .restorationErrorRate:
            return try await restoration(scope).map { .init(key: $0.key, value: $0.errorRate, samples: $0.attempts) }
        case .explorer(let id, let statistic):
            guard let metric = ExplorerCatalog.metric(id) else { return [] }
            return try await explorer(scope, category: metric.category).filter { $0.metric == id }.map { row in
                .init(
                    key: GroupKey(version: row.version, os: row.os, device: row.device),
                    labels: row.subject.map { ["subject": $0] } ?? [:], value: statistic.value(row),
                    samples: Int64(clamping: row.deviceDays))
            }
        case .regression(let id, let percentile):
            let byDevice = scope.groupBy.contains(.device)
            return try await insights(scope, byDevice: byDevice, metric: id).entries.filter {
                $0.metric.id == id && abs($0.insight.percentile - percentile) < 1e-9 && (byDevice || $0.device.isEmpty)
            }.map { entry in
                let insight = entry.insight
                var value: Double?
                if insight.classification != .insufficientData, let delta = insight.deltaPercentage,
                    let interval = insight.confidenceInterval
                {
                    let clear = entry.metric.direction == .lowerIsWorse ? interval.upper < 0 : interval.lower > 0
                    value = clear ? abs(delta) : 0
                }
                var labels: [String: String] = [:]
                if !entry.subject.isEmpty { labels["subject"] = entry.subject }
                return .init(
                    key: GroupKey(version: insight.latestVersion, device: entry.device.isEmpty ? nil : entry.device),
                    labels: labels, value: value, samples: Int64(clamping: insight.latestDeviceDays))
            }
        case .ratio(let numerator, let denominator):
            return ratio(try await evaluate(numerator, scope), over: try await evaluate(denominator, scope))
        case .scaled(let inner, let factor):
            return try await evaluate(inner, scope).map { value in
                var copy = value
                copy.value = value.value.map { $0 * factor }
                return copy
            }
        }
    }

    /// `numerator / denominator` per group. Rows are matched on their group and extra labels; a
    /// labelled numerator row (e.g. one per handler) falls back to its group's unlabelled
    /// denominator, so `ratio(handler_imbalance, device_days)` keeps one value per handler.
    /// Samples are the denominator's; a ratio over nothing is `nil`.
    private func ratio(_ numerator: [MeasureValue], over denominator: [MeasureValue]) -> [MeasureValue] {
        struct Labelled: Hashable {
            var key: GroupKey
            var labels: [String: String]
        }
        func index(_ values: [MeasureValue]) -> [Labelled: MeasureValue] {
            Dictionary(values.map { (Labelled(key: $0.key, labels: $0.labels), $0) }, uniquingKeysWith: { a, _ in a })
        }
        func divide(_ n: Double?, _ d: MeasureValue?) -> Double? {
            guard let d = d?.value, d > 0 else { return nil }
            return (n ?? 0) / d
        }
        if numerator.contains(where: { !$0.labels.isEmpty }) {
            let bottom = index(denominator)
            return numerator.map { top in
                let d =
                    bottom[Labelled(key: top.key, labels: top.labels)] ?? bottom[Labelled(key: top.key, labels: [:])]
                return .init(key: top.key, labels: top.labels, value: divide(top.value, d), samples: d?.samples ?? 0)
            }
        }
        let top = index(numerator)
        return denominator.map { bottom in
            let n = top[Labelled(key: bottom.key, labels: bottom.labels)] ?? top[Labelled(key: bottom.key, labels: [:])]
            return .init(
                key: bottom.key, labels: bottom.labels, value: divide(n?.value, bottom), samples: bottom.samples)
        }
    }

    private func sum(_ pairs: [(GroupKey, Int64)]) -> [MeasureValue] {
        var totals: [GroupKey: Int64] = [:]
        for (key, count) in pairs { totals[key, default: 0].addSaturating(count) }
        return totals.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: Double($0.value), samples: $0.value) }
    }
}
