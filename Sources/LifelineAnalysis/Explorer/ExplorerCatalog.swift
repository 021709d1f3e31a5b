import LifelineModel

/// The explorer's categories (`category=` of `GET /v1/apps/{bundleId}/metrics`), one per Organizer pane.
package enum ExplorerCategory: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
    case launch
    case hang
    case memory
    case disk
    case battery
    case animation
    case termination

    /// App Store Connect's category identifier (`metricCategories[].identifier`).
    package var appleIdentifier: MetricCategoryIdentifier {
        switch self {
        case .launch: .launch
        case .hang: .hang
        case .memory: .memory
        case .disk: .disk
        case .battery: .battery
        case .animation: .animation
        case .termination: .termination
        }
    }
}

/// The unit of an explorer metric's values (the row's `unit`). Durations are milliseconds and sizes
/// bytes, the canonical units of ``MeasurementUnit``, whatever the format or the device's language.
package enum ExplorerUnit: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
    case milliseconds = "ms"
    case bytes
    case instructions
    case millisecondsPerSecond = "ms_per_s"
    case apl
    case bars
    /// Seconds hung per hour in the foreground.
    case secondsPerHour = "s_per_h"
    /// Exits per device-day (one metric payload is one device-day).
    case exitsPerDeviceDay = "exits_per_device_day"
    /// Exits per hour in the foreground.
    case exitsPerHour = "exits_per_h"
}

/// How an explorer metric's figures are computed (see ``ExplorerRow``).
package enum ExplorerMetricKind: String, Sendable, Equatable, Hashable, Codable {
    /// A MetricKit histogram (launch times, hang durations, cellular bars): the row's percentiles
    /// interpolate linearly inside the merged buckets (``BucketDistribution/percentile(_:)``); the
    /// mean is the pooled mean of all samples (bucket midpoints).
    case histogram
    /// One value per device-day (peak memory, daily logical writes, CPU time, exits of a reason per
    /// device-day…): percentiles across device-days from the ``QuantileSketch`` (≤ 1 % relative
    /// error); the mean is the mean over device-days.
    case deviceDayValue = "device_day_value"
    /// A count or duration per hour in the foreground (seconds hung, exits), one rate per device-day
    /// with foreground time: percentiles across device-days from the sketch; the mean is the pooled
    /// rate `Σ numerator / Σ hours` (Organizer's hang rate), so a device-day with seconds of
    /// foreground time cannot dominate it.
    case ratePerForegroundHour = "rate_per_foreground_hour"
}

/// Where the extractor reads an explorer metric in a decoded ``MetricPayload``.
package enum ExplorerSource: Sendable, Equatable, Hashable {
    /// A scalar: the first of these names present (`section.key`, as both decoders name it).
    case scalar([String])
    /// A named histogram (`section.key`).
    case histogram(String)
    /// Seconds hung (the hang histogram's samples × bucket midpoints) per foreground hour.
    case hangRate
    /// Exits of one state and reason (the legacy reason, e.g. `MemoryPressure`), per device-day or
    /// per foreground hour.
    case exits(AppState, reason: String, perForegroundHour: Bool)
    /// `signpostCumulativeHitchTimeRatio` of each signpost, one series per signpost (the row's `subject`).
    case signpostHitchRatio
}

/// One metric of the explorer: a stable id, its unit, kind, direction, goal band and where it comes from.
package struct ExplorerMetric: Sendable, Equatable, Identifiable {
    /// Stable id, `category.name` (e.g. `launch.time_to_first_draw`); never renamed once shipped.
    package var id: String
    package var category: ExplorerCategory
    /// A short English title for charts and reports.
    package var title: String
    package var unit: ExplorerUnit
    package var kind: ExplorerMetricKind
    /// `true` when a lower value is better (every resource, duration and failure exit), `false`
    /// when a higher one is (cellular bars), `nil` when neither is (normal exits): such a metric has
    /// no regressions.
    package var lowerIsBetter: Bool?
    /// Organizer's published good/fair/poor band, `nil` where Apple publishes none.
    package var goalBand: GoalBand?
    package var source: ExplorerSource
    /// The names the decoded model gives it: the legacy `section.key` names (what the 2.0.0 decoder
    /// maps its keys onto), for documentation and the mapping tests.
    package var modelNames: [String]
    /// The 2.0.0 `MetricReport` keys it is read from (`timeToFirstDrawMetric`…); empty when the
    /// metric only exists in legacy payloads.
    package var reportKeys: [String]
    /// App Store Connect's metric identifier where Apple's published example names one
    /// (`launchTime`); otherwise the Lifeline id.
    package var appleIdentifier: String

    /// The direction insights use; `nil` for a metric without one.
    package var direction: MetricDirection? {
        lowerIsBetter.map { $0 ? .higherIsWorse : .lowerIsWorse }
    }
}

/// Every metric of the explorer, by category, for legacy payloads and 2.0.0 reports alike.
///
/// Both decoders name values the same way (the 2.0.0 decoder maps `peakMemoryMetric` onto
/// `memoryMetrics.peakMemoryUsage`, `timeToFirstDrawMetric` onto
/// `applicationLaunchMetrics.histogrammedTimeToFirstDrawKey`…), so one source per metric reads both.
/// Two animation metrics differ by format: the legacy scroll-only `scrollHitchTimeRatio` has no
/// 2.0.0 successor, and the all-animation hitch ratio (`hitchTimeMetric.ratio`, iOS 26's
/// `MXAnimationMetric.hitchTimeRatio`) is its own metric with its own band.
package enum ExplorerCatalog {
    /// Every metric, in display order.
    package static let metrics: [ExplorerMetric] = launch + hang + memory + disk + battery + animation + terminations

    /// Metric by id.
    package static let byId: [String: ExplorerMetric] = Dictionary(
        metrics.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

    /// The metric of `id`, `nil` for an unknown id.
    package static func metric(_ id: String) -> ExplorerMetric? { byId[id] }

    /// Each metric's ordinal, its position in ``metrics``: what a fold indexes cells by
    /// (``ExplorerCellMapBuilder``), so adding an observation hashes no id.
    package static let ordinals: [String: Int] = Dictionary(
        metrics.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })

    /// Each metric's category, by ordinal (no metric struct copied to read it in a fold).
    package static let categories: [ExplorerCategory] = metrics.map(\.category)

    /// Each metric's id as UTF-8 bytes, by ordinal.
    static let idBytes: [[UInt8]] = metrics.map { Array($0.id.utf8) }
    /// The ordinals in their ids' byte order (the packed maps' entry order: ``ExplorerCellMap``).
    static let byteOrder: [Int] = metrics.indices.sorted { idBytes[$0].lexicographicallyPrecedes(idBytes[$1]) }
    /// Each metric's number in the packed maps' encoding (``ExplorerCellMap/numberedIDs``; 0: not
    /// there, written by name), by ordinal.
    static let numbers: [Int] = idBytes.map { ExplorerCellMap.numbers[$0] ?? 0 }
    /// Whether every id is ASCII (then byte order is ``ExplorerCellMap/Key``'s order).
    static let idsAreASCII = idBytes.allSatisfy(ExplorerCellMap.isASCII)

    /// The ordinals of each category's metrics: ``metrics`` lists them category by category, so
    /// each is one range (the lowest to the highest ordinal of the category, were they not).
    package static let ordinalRanges: [ExplorerCategory: Range<Int>] = Dictionary(
        grouping: metrics.indices, by: { metrics[$0].category }
    ).compactMapValues { ordinals in ordinals.min().flatMap { low in ordinals.max().map { low..<($0 + 1) } } }

    /// Each category's ordinals (``ordinalRanges``) in their ids' byte order (``byteOrder``).
    static let byteOrders: [ExplorerCategory: (ordinals: Range<Int>, byteOrder: [Int])] = ordinalRanges.mapValues {
        range in (range, byteOrder.filter(range.contains))
    }

    /// Each category's ordinals in their numbers' order (``numbers``): the order of the map's
    /// version 4 (those without a number first; such a row is not written in it).
    static let numberOrders: [ExplorerCategory: [Int]] = ordinalRanges.mapValues { range in
        range.sorted { numbers[$0] < numbers[$1] }
    }

    /// The metrics of one category, in display order.
    package static func metrics(in category: ExplorerCategory) -> [ExplorerMetric] {
        metrics.filter { $0.category == category }
    }

    /// The category part of a metric id (`memory` of `memory.peak`): every id starts with its
    /// category's raw value and a dot (``ExplorerMetric/id``; `ExplorerCatalogTests` checks it).
    /// The stores key their packed cells by it, so a query reads its categories' rows only.
    package static func categoryKey(ofMetric id: String) -> Substring {
        // By the UTF-8 view: walking Characters (grapheme breaking) cost 6 % of the writer thread.
        id[..<(id.utf8.firstIndex(of: UInt8(ascii: ".")) ?? id.endIndex)]
    }

    /// Model names that are read but are no explorer metric of their own, and why: the extractor
    /// uses them as denominators, or the issue lists no figure for them. Every other name in a
    /// payload that no metric lists is unmapped (the fixture tests check there is none).
    package static let auxiliaryNames: [String: String] = [
        "applicationTimeMetrics.cumulativeForegroundTime": "denominator of the per-foreground-hour rates",
        "applicationTimeMetrics.cumulativeBackgroundTime": "app time, not an Organizer figure",
        "applicationTimeMetrics.cumulativeBackgroundAudioTime": "app time, not an Organizer figure",
        "applicationTimeMetrics.cumulativeBackgroundLocationTime": "app time, not an Organizer figure",
        "animationMetrics.totalHitchTime": "component of hitchTimeMetric.ratio",
        "animationMetrics.totalAnimationTime": "component of hitchTimeMetric.ratio",
    ]

    /// Sections (the part of a name before its first `.`) read as a whole but no explorer metric:
    /// the 2.0.0 disk-space snapshot, sent in a zero-length report that is no device-day.
    package static let auxiliarySections: [String: String] = [
        "totalFileCountMetric": "disk-space snapshot of a zero-length report, not a device-day",
        "totalFileSizeMetric": "disk-space snapshot of a zero-length report, not a device-day",
        "totalDiskSpaceCapacityMetric": "disk-space snapshot of a zero-length report, not a device-day",
    ]

    /// Why `name` is read but no metric of its own (``auxiliaryNames``, ``auxiliarySections``);
    /// `nil` for any other name.
    package static func auxiliaryReason(_ name: String) -> String? {
        auxiliaryNames[name] ?? name.split(separator: ".", maxSplits: 1).first.flatMap { auxiliarySections[String($0)] }
    }

    /// The foreground time name (ms), the denominator of every per-foreground-hour rate.
    package static let foregroundTimeName = "applicationTimeMetrics.cumulativeForegroundTime"
    /// The hang histogram's name.
    package static let hangHistogramName = "applicationResponsivenessMetrics.histogrammedAppHangTime"

    private static func make(
        _ id: String, _ category: ExplorerCategory, _ title: String, _ unit: ExplorerUnit, _ kind: ExplorerMetricKind,
        lowerIsBetter: Bool? = true, band: GoalBand? = nil, source: ExplorerSource, names: [String],
        reportKeys: [String], apple: String? = nil
    ) -> ExplorerMetric {
        ExplorerMetric(
            id: id, category: category, title: title, unit: unit, kind: kind, lowerIsBetter: lowerIsBetter,
            goalBand: band, source: source, modelNames: names, reportKeys: reportKeys, appleIdentifier: apple ?? id)
    }

    private static func histogram(
        _ id: String, _ category: ExplorerCategory, _ title: String, _ unit: ExplorerUnit, _ name: String,
        _ reportKey: String, lowerIsBetter: Bool? = true, apple: String? = nil
    ) -> ExplorerMetric {
        make(
            id, category, title, unit, .histogram, lowerIsBetter: lowerIsBetter, source: .histogram(name),
            names: [name], reportKeys: [reportKey], apple: apple)
    }

    private static func value(
        _ id: String, _ category: ExplorerCategory, _ title: String, _ unit: ExplorerUnit, _ names: [String],
        _ reportKeys: [String], band: GoalBand? = nil
    ) -> ExplorerMetric {
        make(
            id, category, title, unit, .deviceDayValue, band: band, source: .scalar(names), names: names,
            reportKeys: reportKeys)
    }

    static let launch: [ExplorerMetric] = [
        histogram(
            "launch.time_to_first_draw", .launch, "Time to first draw", .milliseconds,
            "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey", "timeToFirstDrawMetric", apple: "launchTime"),
        histogram(
            "launch.optimized_time_to_first_draw", .launch, "Optimized time to first draw", .milliseconds,
            "applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey", "optimizedTimeToFirstDrawMetric"),
        histogram(
            "launch.resume_time", .launch, "Resume time", .milliseconds,
            "applicationLaunchMetrics.histogrammedResumeTime", "applicationResumeTimeMetric"),
        histogram(
            "launch.extended_launch", .launch, "Extended launch", .milliseconds,
            "applicationLaunchMetrics.histogrammedExtendedLaunch", "extendedLaunchMetric"),
    ]

    static let hang: [ExplorerMetric] = [
        histogram("hang.hang_time", .hang, "Hang duration", .milliseconds, hangHistogramName, "hangTimeMetric"),
        make(
            "hang.seconds_per_foreground_hour", .hang, "Seconds hung per foreground hour", .secondsPerHour,
            .ratePerForegroundHour, source: .hangRate, names: [hangHistogramName, foregroundTimeName],
            reportKeys: ["hangTimeMetric", "totalForegroundTimeMetric"]),
    ]

    static let memory: [ExplorerMetric] = [
        value("memory.peak", .memory, "Peak memory", .bytes, ["memoryMetrics.peakMemoryUsage"], ["peakMemoryMetric"]),
        value(
            "memory.average_suspended", .memory, "Average suspended memory", .bytes,
            ["memoryMetrics.averageSuspendedMemory"], ["suspendedMemoryMetric"]),
    ]

    static let disk: [ExplorerMetric] = [
        value(
            "disk.logical_writes", .disk, "Logical writes per day", .bytes, ["diskIOMetrics.cumulativeLogicalWrites"],
            ["logicalDiskWritesMetric"])
    ]

    /// `locationActivityMetrics` names (legacy, and the 2.0.0 `locationActivityTimeMetric` members
    /// the decoder maps onto them) and their ids.
    static let locationAccuracies: [(id: String, title: String, name: String, member: String)] = [
        (
            "best_accuracy_for_navigation", "best for navigation", "cumulativeBestAccuracyForNavigationTime",
            "bestAccuracyForNavigation"
        ),
        ("best_accuracy", "best", "cumulativeBestAccuracyTime", "bestAccuracy"),
        ("ten_meters", "10 m", "cumulativeNearestTenMetersAccuracyTime", "tenMeters"),
        ("hundred_meters", "100 m", "cumulativeHundredMetersAccuracyTime", "oneHundredMeter"),
        ("kilometer", "1 km", "cumulativeKilometerAccuracyTime", "oneKilometer"),
        ("three_kilometers", "3 km", "cumulativeThreeKilometersAccuracyTime", "threeKilometers"),
        ("reduced_accuracy", "reduced", "cumulativeReducedAccuracyTime", "reducedAccuracy"),
    ]

    static let battery: [ExplorerMetric] =
        [
            value(
                "battery.cpu_time", .battery, "CPU time", .milliseconds, ["cpuMetrics.cumulativeCPUTime"],
                ["cpuTimeMetric"]),
            value(
                "battery.cpu_instructions", .battery, "CPU instructions", .instructions,
                ["cpuMetrics.cumulativeCPUInstructions"], ["cpuInstructionsCountMetric"]),
            value(
                "battery.gpu_time", .battery, "GPU time", .milliseconds, ["gpuMetrics.cumulativeGPUTime"],
                ["gpuTimeMetric"]),
        ]
        + locationAccuracies.map { accuracy in
            value(
                "battery.location_\(accuracy.id)", .battery, "Location activity, \(accuracy.title) accuracy",
                .milliseconds, ["locationActivityMetrics.\(accuracy.name)"],
                ["locationActivityTimeMetric.\(accuracy.member)"])
        }
        + [
            value(
                "battery.display_average_pixel_luminance", .battery, "Average pixel luminance", .apl,
                ["displayMetrics.averagePixelLuminance"], ["pixelLuminanceMetric"]),
            value(
                "battery.wifi_upload", .battery, "Wi-Fi upload", .bytes,
                ["networkTransferMetrics.cumulativeWifiUpload"],
                ["totalWiFiUploadMetric"]),
            value(
                "battery.wifi_download", .battery, "Wi-Fi download", .bytes,
                ["networkTransferMetrics.cumulativeWifiDownload"], ["totalWiFiDownloadMetric"]),
            value(
                "battery.cellular_upload", .battery, "Cellular upload", .bytes,
                ["networkTransferMetrics.cumulativeCellularUpload"], ["totalCellularUploadMetric"]),
            value(
                "battery.cellular_download", .battery, "Cellular download", .bytes,
                ["networkTransferMetrics.cumulativeCellularDownload"], ["totalCellularDownloadMetric"]),
            histogram(
                "battery.cellular_condition", .battery, "Cellular condition", .bars,
                "cellularConditionMetrics.cellConditionTime", "cellularConditionTimeMetric", lowerIsBetter: false),
        ]

    static let animation: [ExplorerMetric] = [
        value(
            "animation.scroll_hitch_time_ratio", .animation, "Scroll hitch time ratio", .millisecondsPerSecond,
            ["animationMetrics.scrollHitchTimeRatio"], [], band: OrganizerGoals.scrollHitchTimeRatio),
        value(
            "animation.hitch_time_ratio", .animation, "Hitch time ratio", .millisecondsPerSecond,
            ["animationMetrics.ratio", "animationMetrics.hitchTimeRatio"], ["hitchTimeMetric.ratio"],
            band: OrganizerGoals.hitchTimeRatio),
        // WWDC20 10077's bands are for the hitch time ratio of any animation interval, which is what
        // a signpost's cumulative hitch ratio measures.
        make(
            "animation.signpost_hitch_time_ratio", .animation, "Signpost hitch time ratio", .millisecondsPerSecond,
            .deviceDayValue, band: OrganizerGoals.scrollHitchTimeRatio, source: .signpostHitchRatio,
            names: ["signpostMetrics[].signpostIntervalData.signpostCumulativeHitchTimeRatio"],
            reportKeys: ["signpostIntervalMetric.hitchTimeRatio"]),
    ]

    /// Exit reasons (legacy names, as both decoders name them) with their id part and the 2.0.0
    /// counter (`nil`: no successor), per DOMAIN.md and METRICKIT-27.md.
    package static let exitReasons: [(reason: String, id: String, reportCounter: String?)] = [
        ("NormalApp", "normal_app", "normal"),
        ("MemoryResourceLimit", "memory_resource_limit", "memoryLimit"),
        ("BadAccess", "bad_access", "badAccess"),
        ("Abnormal", "abnormal", "abnormal"),
        ("IllegalInstruction", "illegal_instruction", "illegalInstruction"),
        ("AppWatchdog", "app_watchdog", "watchdog"),
        ("CPUResourceLimit", "cpu_resource_limit", "highCPU"),
        ("MemoryPressure", "memory_pressure", "systemPressure"),
        ("SuspendedWithLockedFile", "suspended_with_locked_file", "fileLock"),
        ("BackgroundTaskAssertionTimeout", "background_task_assertion_timeout", "taskTimeout"),
        ("BackgroundURLSessionCompletionTimeout", "background_url_session_completion_timeout", nil),
        ("BackgroundFetchCompletionTimeout", "background_fetch_completion_timeout", nil),
    ]

    /// The reasons each state reports (DOMAIN.md's table; legacy foreground data carries
    /// `CPUResourceLimit` too).
    package static func exitReasons(in state: AppState) -> [(reason: String, id: String, reportCounter: String?)] {
        switch state {
        case .foreground: exitReasons.prefix(7).map { $0 }
        case .background: exitReasons
        }
    }

    /// The id of the exit metric of `state` and `reason` (a legacy reason name), `nil` for a reason
    /// the catalog does not know.
    package static func exitMetricId(_ state: AppState, reason: String, perForegroundHour: Bool) -> String? {
        guard let entry = exitReasons(in: state).first(where: { $0.reason == reason }) else { return nil }
        return "termination.\(state.rawValue).\(entry.id)."
            + (perForegroundHour ? "per_foreground_hour" : "per_device_day")
    }

    static let terminations: [ExplorerMetric] = AppState.allCases.flatMap { state in
        exitReasons(in: state).flatMap { entry in
            [false, true].map { perHour in
                let legacyKey =
                    "applicationExitMetrics.\(state == .foreground ? "foregroundExitData" : "backgroundExitData")"
                    + ".cumulative\(entry.reason)ExitCount"
                let reportKey = entry.reportCounter.map { "\(state.rawValue)TerminationMetric.\($0)TerminationCount" }
                return make(
                    "termination.\(state.rawValue).\(entry.id)." + (perHour ? "per_foreground_hour" : "per_device_day"),
                    .termination,
                    "\(state.rawValue.capitalized) exits: \(entry.reason)"
                        + (perHour ? " per foreground hour" : " per device-day"),
                    perHour ? .exitsPerHour : .exitsPerDeviceDay, perHour ? .ratePerForegroundHour : .deviceDayValue,
                    lowerIsBetter: entry.reason == "NormalApp" ? nil : true,
                    source: .exits(state, reason: entry.reason, perForegroundHour: perHour),
                    names: [legacyKey] + (perHour ? [foregroundTimeName] : []),
                    reportKeys: reportKey.map { [$0] } ?? [])
            }
        }
    }
}
