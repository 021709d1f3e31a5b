import LifelineModel

/// Exits of one group, state and reason, with their rates.
package struct ExitFigure: Sendable, Equatable {
    package var key: GroupKey
    package var state: AppState
    package var reason: String
    package var count: Int64
    /// Metric payloads of the group (≈ device-days).
    package var deviceDays: Int64
    /// `count / deviceDays × 1000`; `nil` without device-days.
    package var perThousandDeviceDays: Double?
    /// `count` per hour of foreground (foreground exits) or background (background exits) time;
    /// `nil` when the payloads carry no such time.
    package var perHour: Double?
}

/// Entries into and exits from one background-task expiration handler, in one group.
package struct HandlerFigure: Sendable, Equatable {
    package var key: GroupKey
    package var category: String
    package var handler: String
    package var entered: Int64
    package var exited: Int64
    /// `entered − exited`: handlers that never returned (hung or crashed).
    package var imbalance: Int64
    /// `imbalance / entered`; `nil` when never entered.
    package var imbalanceRatio: Double?
    /// Above the flag threshold with enough entries.
    package var flagged: Bool
    /// Background `BackgroundTaskAssertionTimeout` exits of the same group.
    package var assertionTimeoutExits: Int64
}

/// When an expiration handler is flagged.
package struct HandlerFlagRule: Sendable, Equatable, Codable {
    /// Flag when `imbalance / entered` is above this. Default 0.01 (1 %).
    package var maxImbalanceRatio: Double = 0.01
    /// … and the handler was entered at least this often in the group. Default 10.
    package var minEntered: Int64 = 10

    package init(maxImbalanceRatio: Double = 0.01, minEntered: Int64 = 10) {
        self.maxImbalanceRatio = maxImbalanceRatio
        self.minEntered = minEntered
    }

    enum CodingKeys: String, CodingKey {
        case maxImbalanceRatio = "max_imbalance_ratio"
        case minEntered = "min_entered"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        maxImbalanceRatio = try c.decodeIfPresent(Double.self, forKey: .maxImbalanceRatio) ?? 0.01
        minEntered = try c.decodeIfPresent(Int64.self, forKey: .minEntered) ?? 10
    }
}

/// State restoration of one group.
package struct RestorationFigure: Sendable, Equatable {
    package var key: GroupKey
    package var attempts: Int64
    package var failures: Int64
    /// `failures / attempts`; `nil` without attempts.
    package var errorRate: Double?
    /// Restoration durations from the attempt signpost's histogram, in ms.
    package var p50Milliseconds: Double?
    package var p95Milliseconds: Double?
    /// Samples in the duration histogram.
    package var durationSamples: Int64
}

/// Percentiles of one histogram in one group (see ``BucketDistribution`` for the estimate).
package struct PercentileFigure: Sendable, Equatable {
    package var key: GroupKey
    package var source: HistogramSource
    package var samples: Int64
    package var p50: Double?
    package var p90: Double?
    package var p95: Double?
    package var p99: Double?
}

/// A crash group's occurrences in scope.
package struct CrashFigure: Sendable, Equatable {
    package var group: CrashGroupInfo
    package var kind: DiagnosticKind
    /// Occurrences in scope.
    package var count: Int64
    /// Occurrences per app version in scope (unknown version: `"unknown"`).
    package var countByVersion: [String: Int64]
    package var exceptionName: String?
    package var signalName: String?
    /// A watchdog termination (`0x8BADF00D`).
    package var isWatchdog: Bool
}

/// One value of a ``Measure`` for one group (and handler, for handler measures).
package struct MeasureValue: Sendable, Equatable {
    package var key: GroupKey
    /// Labels beyond the group's dimensions (e.g. `handler`).
    package var labels: [String: String]
    /// `nil` when undefined (a ratio over nothing).
    package var value: Double?
    /// How many observations the value rests on (a ratio's denominator, a histogram's samples).
    package var samples: Int64

    package init(key: GroupKey, labels: [String: String] = [:], value: Double?, samples: Int64) {
        self.key = key
        self.labels = labels
        self.value = value
        self.samples = samples
    }
}

/// The headline figures of one scope, all groups together.
package struct SummaryFigure: Sendable, Equatable {
    package var deviceDays: Int64
    package var foregroundExits: Int64
    package var backgroundExits: Int64
    package var restorationAttempts: Int64
    package var restorationFailures: Int64
    package var restorationErrorRate: Double?
    /// Handlers flagged in any group.
    package var flaggedHandlers: [String]
    /// Diagnostics per kind (every kind present, zero when none).
    package var diagnostics: [DiagnosticKind: Int64]
    package var crashGroups: Int

    /// Foreground exits per 1,000 device-days; `nil` without device-days.
    package var foregroundExitsPerThousandDeviceDays: Double? { perThousand(foregroundExits) }
    /// Background exits per 1,000 device-days; `nil` without device-days.
    package var backgroundExitsPerThousandDeviceDays: Double? { perThousand(backgroundExits) }

    private func perThousand(_ count: Int64) -> Double? {
        deviceDays > 0 ? Double(count) / Double(deviceDays) * 1000 : nil
    }
}
