import LifelineModel

/// What one device-day contributes to one explorer metric.
package enum ExplorerSample: Sendable, Equatable {
    /// A per-device-day value (peak memory, exits of a reason that day…), in the metric's unit.
    case value(Double)
    /// A per-foreground-hour rate's parts: `numerator` (seconds hung, exits) over `hours` (> 0).
    case rate(numerator: Double, hours: Double)
    /// A histogram's buckets (bounds in the metric's unit, counts > 0), sorted.
    case histogram([BucketDistribution.Bucket])
}

/// One observation of a metric payload: a metric, the series inside it, an app state, a sample.
package struct ExplorerObservation: Sendable, Equatable {
    /// The catalog id (``ExplorerMetric/id``).
    package var metric: String
    /// The series inside a metric with several (a signpost, `category/name`); `""` otherwise.
    package var subject: String
    /// ``ExplorerExtractor/overallState`` (`"all"`) or the key of a 2.0.0 app state
    /// (``ExplorerExtractor/stateKey(_:)``).
    package var appState: String
    package var sample: ExplorerSample
    /// The metric's ordinal (``ExplorerCatalog/ordinals``), `nil` for an id outside the catalog.
    package var ordinal: Int?

    package init(metric: String, subject: String = "", appState: String, sample: ExplorerSample) {
        self.init(
            metric: metric, ordinal: ExplorerCatalog.ordinals[metric], subject: subject, appState: appState,
            sample: sample)
    }

    init(metric: String, ordinal: Int?, subject: String, appState: String, sample: ExplorerSample) {
        self.metric = metric
        self.subject = subject
        self.appState = appState
        self.sample = sample
        self.ordinal = ordinal
    }
}

/// One exit counter of a payload with its app state (for the terminations' explained/unexplained).
package struct ExplorerExit: Sendable, Equatable, Hashable {
    package var appState: String
    package var state: AppState
    /// The legacy reason name (`MemoryPressure`); unknown future reasons pass through.
    package var reason: String
    package var count: Int64

    package init(appState: String, state: AppState, reason: String, count: Int64) {
        self.appState = appState
        self.state = state
        self.reason = reason
        self.count = count
    }
}

/// Everything the explorer folds from one metric payload.
package struct ExplorerExtraction: Sendable, Equatable {
    /// Whether the payload is a device-day; when not (a 2.0.0 zero-length disk-space snapshot),
    /// ``observations`` and ``exits`` are empty.
    package var isDeviceDay: Bool
    package var observations: [ExplorerObservation]
    /// Exit counters per app state, state and reason, as sent (zero counters included when sent).
    package var exits: [ExplorerExit]

    package init(isDeviceDay: Bool, observations: [ExplorerObservation], exits: [ExplorerExit]) {
        self.isDeviceDay = isDeviceDay
        self.observations = observations
        self.exits = exits
    }
}

/// From a decoded ``MetricPayload`` (either format) to its explorer observations.
///
/// **App states.** Legacy payloads have one overall state, keyed ``overallState`` (`"all"`). A
/// 2.0.0 report's full-day interval entry is the same overall state (`"all"`), and each of its
/// `stateEntries` adds observations under ``stateKey(_:)`` for what it holds (exits, launch and
/// hang histograms, signposts; Apple reports no resource scalars per state). States overlap (a
/// device is on a screen and in an experiment arm at once), so a query that does not group by
/// app state reads `"all"` only, never the sum of the states.
///
/// **Per metric kind.** A scalar gives `.value`; an average (`averageValue`) its average; a
/// histogram its buckets (2.0.0 inclusive bounds first turned into the legacy half-open ones,
/// ``MetricPayload/withLegacyBucketBounds``, so both formats' buckets merge); seconds hung per
/// foreground hour is the hang histogram's total (Σ bucket midpoint × count) over the foreground
/// hours; exits per device-day are every catalog reason of the state, 0 when the counter is absent
/// (MetricKit omits zero counters); exits per foreground hour the same over the foreground hours.
/// A rate needs foreground time: a device-day (or, for a 2.0.0 state, a state's active time) of 0
/// or unknown hours gives no rate, never an infinite one. Values that are not finite and
/// non-negative are skipped.
package enum ExplorerExtractor {
    /// The app-state key of a legacy payload and of a 2.0.0 report's full-day entry.
    package static let overallState = "all"

    /// The key of a 2.0.0 app state: `domain/label`, then a space and the canonical metadata JSON
    /// when there is any (`com.example.screen/checkout {"userTier":"premium"}`).
    package static func stateKey(_ state: ReportedState) -> String {
        let base = state.domain + "/" + state.label
        return state.metadata == "{}" || state.metadata.isEmpty ? base : base + " " + state.metadata
    }

    /// The observations of `payload`.
    package static func extract(_ payload: MetricPayload) -> ExplorerExtraction {
        guard payload.isDeviceDay else { return ExplorerExtraction(isDeviceDay: false, observations: [], exits: []) }
        let payload = payload.withLegacyBucketBounds
        var observations: [ExplorerObservation] = []
        observations.reserveCapacity(plan.steps.count)
        var exits: [ExplorerExit] = []
        // The scalars by the plan's numbering, the first with a value of each name.
        var scalars = [Double?](repeating: nil, count: plan.scalarNames.count)
        for scalar in payload.scalars {
            guard let value = scalar.measurement.value, let id = plan.scalarNames[scalar.name], scalars[id] == nil
            else { continue }
            scalars[id] = value
        }
        let foregroundHours = scalars[plan.foregroundTime].map { $0 / 3_600_000 }
        let overall = Parts(
            appState: overallState, histograms: payload.histograms, signposts: payload.signposts, exits: payload.exits,
            hours: foregroundHours)
        add(overall, scalars: scalars, to: &observations, &exits)
        let none = [Double?](repeating: nil, count: scalars.count)
        for entry in payload.stateEntries {
            let parts = Parts(
                appState: stateKey(entry.state), histograms: entry.histograms, signposts: entry.signposts,
                exits: entry.exits, hours: entry.activeSeconds.map { $0 / 3600 })
            add(parts, scalars: none, to: &observations, &exits)
        }
        return ExplorerExtraction(isDeviceDay: true, observations: observations, exits: exits)
    }

    /// What one app state of a payload holds.
    private struct Parts {
        var appState: String
        var histograms: [NamedHistogram]
        var signposts: [SignpostMetric]
        var exits: [ExitCount]
        /// Foreground hours (overall) or the state's active hours.
        var hours: Double?
    }

    /// `scalars`: by ``Plan/scalarNames`` (a state entry has none).
    private static func add(
        _ parts: Parts, scalars: [Double?], to observations: inout [ExplorerObservation], _ exits: inout [ExplorerExit]
    ) {
        let plan = Self.plan
        // The first histogram of each name the plan knows, by its number.
        var histograms = [Int](repeating: -1, count: plan.histogramNames.count)
        for (index, histogram) in parts.histograms.enumerated() {
            guard let id = plan.histogramNames[histogram.name], histograms[id] < 0 else { continue }
            histograms[id] = index
        }
        func histogram(_ id: Int) -> Histogram? {
            histograms[id] < 0 ? nil : parts.histograms[histograms[id]].histogram
        }
        let hours = parts.hours.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        var exitCounts = [Int64](repeating: 0, count: plan.exitKeys.count)
        for exit in parts.exits where exit.count >= 0 {
            exits.append(
                ExplorerExit(appState: parts.appState, state: exit.state, reason: exit.reason, count: exit.count))
            if let id = plan.exitKeys[ExitKey(state: exit.state, reason: exit.reason)] {
                exitCounts[id].addSaturating(exit.count)
            }
        }
        // A state entry without any exit counter says nothing about exits (2.0.0 states that saw no
        // termination metric); the overall state of a payload always counts its device-day.
        let hasExitData = parts.appState == overallState || !parts.exits.isEmpty
        for ordinal in plan.steps.indices {
            func emit(_ sample: ExplorerSample, subject: String = "") {
                observations.append(
                    ExplorerObservation(
                        metric: plan.ids[ordinal], ordinal: ordinal, subject: subject, appState: parts.appState,
                        sample: sample))
            }
            switch plan.steps[ordinal] {
            case .scalar(let candidates):
                guard let value = plan.scalarCandidates[candidates].lazy.compactMap({ scalars[$0] }).first,
                    valid(value)
                else { continue }
                emit(.value(value))
            case .histogram(let id):
                guard let histogram = histogram(id), let buckets = buckets(histogram) else { continue }
                emit(.histogram(buckets))
            case .hangRate:
                guard let hours, let histogram = histogram(plan.hangHistogram), let buckets = buckets(histogram)
                else { continue }
                let seconds = buckets.reduce(0.0) { $0 + ($1.start + $1.end) / 2 * Double($1.count) } / 1000
                guard valid(seconds) else { continue }
                emit(.rate(numerator: seconds, hours: hours))
            case .exits(let id, let perHour):
                guard hasExitData else { continue }
                let count = Double(exitCounts[id])
                if perHour {
                    guard let hours else { continue }
                    emit(.rate(numerator: count, hours: hours))
                } else {
                    emit(.value(count))
                }
            case .signpostHitchRatio:
                for signpost in parts.signposts {
                    guard let ratio = signpost.cumulativeHitchTimeRatio?.value, valid(ratio) else { continue }
                    emit(.value(ratio), subject: signpost.category + "/" + signpost.name)
                }
            }
        }
    }

    /// An exit counter's state and reason.
    private struct ExitKey: Hashable {
        var state: AppState
        var reason: String
    }

    /// The catalog's sources numbered once: a payload's scalars, histograms and exit counters are
    /// looked up by name once each, and each metric's step reads them by number (the catalog's
    /// metrics, structs of strings, were copied and their names hashed once per metric and app
    /// state: a third of the explorer thread's time, `lifeline bench explorer-fold`).
    private struct Plan {
        enum Step {
            /// The first present of `scalarCandidates[range]`.
            case scalar(Range<Int>)
            case histogram(Int)
            case hangRate
            case exits(Int, perHour: Bool)
            case signpostHitchRatio
        }

        /// By ordinal (``ExplorerCatalog/metrics``).
        var steps: [Step] = []
        var ids: [String] = []
        var scalarNames: [String: Int] = [:]
        var scalarCandidates: [Int] = []
        var histogramNames: [String: Int] = [:]
        var exitKeys: [ExitKey: Int] = [:]
        var foregroundTime = 0
        var hangHistogram = 0

        init(_ metrics: [ExplorerMetric]) {
            func number<Key: Hashable>(_ key: Key, in names: inout [Key: Int]) -> Int {
                if let id = names[key] { return id }
                names[key] = names.count
                return names.count - 1
            }
            foregroundTime = number(ExplorerCatalog.foregroundTimeName, in: &scalarNames)
            hangHistogram = number(ExplorerCatalog.hangHistogramName, in: &histogramNames)
            for metric in metrics {
                ids.append(metric.id)
                switch metric.source {
                case .scalar(let names):
                    let start = scalarCandidates.count
                    scalarCandidates += names.map { number($0, in: &scalarNames) }
                    steps.append(.scalar(start..<scalarCandidates.count))
                case .histogram(let name): steps.append(.histogram(number(name, in: &histogramNames)))
                case .hangRate: steps.append(.hangRate)
                case .exits(let state, let reason, let perHour):
                    steps.append(.exits(number(ExitKey(state: state, reason: reason), in: &exitKeys), perHour: perHour))
                case .signpostHitchRatio: steps.append(.signpostHitchRatio)
                }
            }
        }
    }

    private static let plan = Plan(ExplorerCatalog.metrics)

    private static func valid(_ value: Double) -> Bool { value.isFinite && value >= 0 }

    /// The buckets with both bounds, finite, ordered and a positive count; `nil` when none is left.
    static func buckets(_ histogram: Histogram) -> [BucketDistribution.Bucket]? {
        let buckets = histogram.buckets.compactMap { bucket -> BucketDistribution.Bucket? in
            guard let start = bucket.start, let end = bucket.end, start.isFinite, end.isFinite, start >= 0,
                end >= start, bucket.count > 0
            else { return nil }
            return BucketDistribution.Bucket(start: start, end: end, count: bucket.count)
        }
        return buckets.isEmpty ? nil : BucketDistribution(buckets).buckets
    }
}
