import Foundation
import LifelineModel

/// What one device did on one day, drawn before any JSON is written: the metric payload's
/// counters and the diagnostics they imply are drawn together so they agree.
struct DayActivity: Sendable {
    var foregroundLaunches = 0
    var backgroundLaunches = 0
    var foregroundExits: [String: Int] = [:]
    var backgroundExits: [String: Int] = [:]
    /// Entered / exited per expiration handler name (without the suffix).
    var handlers: [(name: String, entered: Int, exited: Int)] = []
    var restoreAttempts = 0
    var restoreFailures = 0
    var events = DiagnosticEvents()
    var lowPower = false
    /// What the `perf-regression` scenario multiplies each performance value by (absent: 1).
    var perfFactors: [PerfMetric: Double] = [:]

    /// The multiplier of `metric`'s values today.
    func factor(_ metric: PerfMetric) -> Double { perfFactors[metric] ?? 1 }

    /// A device-day value of a per-device-day metric: a draw of its law times its factor, in a
    /// written unit worth `unit` canonical units (1,000 for kB or s, 10⁶ for MB), rounded.
    func draw(_ metric: PerfMetric, per unit: Double, _ rng: inout SplitMix64) -> Int64 {
        Int64((metric.baseline.draw(&rng) * factor(metric) / unit).rounded())
    }

    /// The median and spread of a histogram metric's samples today: the baseline's, the median
    /// times the factor.
    func law(_ metric: PerfMetric) -> (median: Double, width: Double) {
        guard case .logSpread(let median, let width) = metric.baseline else { return (0, 0) }
        return (median * factor(metric), width)
    }

    static let foregroundReasons = [
        "NormalApp", "MemoryResourceLimit", "BadAccess", "Abnormal", "IllegalInstruction", "AppWatchdog",
        "CPUResourceLimit",
    ]
    static let backgroundReasons = [
        "NormalApp", "MemoryResourceLimit", "CPUResourceLimit", "MemoryPressure", "BadAccess", "Abnormal",
        "IllegalInstruction", "AppWatchdog", "SuspendedWithLockedFile", "BackgroundTaskAssertionTimeout",
        "BackgroundURLSessionCompletionTimeout", "BackgroundFetchCompletionTimeout",
    ]

    /// Draws a device-day. `affected` is whether this device-day runs the scenario's version.
    init(device: Device, scenario: Scenario, affected: Bool, rng: inout SplitMix64) {
        let a = device.activity
        lowPower = rng.chance(0.15)
        foregroundLaunches = 1 + rng.poisson(3 * a)
        backgroundLaunches = rng.poisson(4 * a)

        // Crashes, with the diagnostics MetricKit delivers for them.
        for crash in SimulatedCrash.allCases {
            var rate = crash.baselineRate * a
            if affected && scenario == .watchdogSpike && crash == .launchWatchdog { rate = 0.012 }
            if affected && scenario == .crashSpike && crash == .imageCacheBadAccess { rate = 0.03 * a }
            let count = rng.poisson(rate)
            for _ in 0..<count {
                events.crashes.append(crash)
                if crash.background {
                    backgroundExits[crash.exitReason, default: 0] += 1
                } else {
                    foregroundExits[crash.exitReason, default: 0] += 1
                }
            }
        }
        events.crashes = Array(events.crashes.prefix(6))

        foregroundExits["NormalApp", default: 0] += rng.binomial(foregroundLaunches, 0.6)
        foregroundExits["MemoryResourceLimit", default: 0] += rng.poisson(0.004 * a)
        foregroundExits["CPUResourceLimit", default: 0] += rng.poisson(0.0005)
        backgroundExits["NormalApp", default: 0] += rng.poisson(0.3)
        backgroundExits["MemoryResourceLimit", default: 0] += rng.poisson(0.01 * a)
        backgroundExits["CPUResourceLimit", default: 0] += rng.poisson(0.002 * a)
        backgroundExits["MemoryPressure", default: 0] += rng.poisson(0.5 * Double(backgroundLaunches) + 0.8)
        backgroundExits["SuspendedWithLockedFile", default: 0] += rng.poisson(0.003)
        backgroundExits["BackgroundTaskAssertionTimeout", default: 0] += rng.poisson(0.004 * a)
        backgroundExits["BackgroundURLSessionCompletionTimeout", default: 0] += rng.poisson(0.002)
        backgroundExits["BackgroundFetchCompletionTimeout", default: 0] += rng.poisson(0.003 * a)

        // Expiration handlers: balanced, unless the scenario makes one hang.
        for name in ["BackgroundSyncExpirationHandler", "UploadExpirationHandler"] {
            let entered = rng.poisson(Double(backgroundLaunches) * (name.hasPrefix("Upload") ? 0.15 : 0.4))
            var exited = entered
            if affected && scenario == .expirationHang && name.hasPrefix("BackgroundSync") {
                let hung = rng.binomial(entered, 0.35)
                exited -= hung
                backgroundExits["BackgroundTaskAssertionTimeout", default: 0] += hung
            }
            handlers.append((name, entered, exited))
        }

        // State restoration on cold launches.
        restoreAttempts = rng.binomial(foregroundLaunches, 0.7)
        let failureRate = affected && scenario == .restorationRegression ? 0.012 : 0.0005
        restoreFailures = rng.binomial(restoreAttempts, failureRate)

        // Other diagnostics.
        events.hangs = rng.chance(0.03 * a) ? 1 : 0
        events.cpuExceptions = rng.chance(0.002) ? 1 : 0
        events.diskWriteExceptions = rng.chance(0.002) ? 1 : 0
        events.appLaunches = rng.chance(0.003) ? 1 : 0
    }
}

/// Writes `MXMetricPayload` JSON for one device-day.
struct MetricBuilder {
    var device: Device
    var version: String
    var build: String
    var bundleIdentifier: String
    var activity: DayActivity
    var pid: Int64
    var begin: String
    var end: String
    var locale: DeviceLocale

    func payload(rng: inout SplitMix64) -> [UInt8] {
        var w = JSONWriter(capacity: 12_288)
        let l = locale
        let a = device.activity
        w.object { w in
            w.string("appVersion", version)
            w.string("timeStampBegin", begin)
            w.string("timeStampEnd", end)
            w.object("metaData") { w in
                w.string("appBuildVersion", build)
                w.string("osVersion", device.os.display)
                w.string("regionFormat", l.regionFormat)
                w.string("platformArchitecture", "arm64e")
                w.string("deviceType", device.deviceType)
                if device.os.major >= 17 {
                    w.string("bundleIdentifier", bundleIdentifier)
                    w.bool("lowPowerModeEnabled", activity.lowPower)
                }
                w.bool("isTestFlightApp", device.isTestFlight)
                if device.os.major >= 18 { w.int("pid", pid) }
            }
            w.object("applicationExitMetrics") { w in
                exits(&w, "foregroundExitData", DayActivity.foregroundReasons, activity.foregroundExits)
                exits(&w, "backgroundExitData", DayActivity.backgroundReasons, activity.backgroundExits)
            }
            w.object("applicationLaunchMetrics") { w in
                let launches = activity.foregroundLaunches
                histogram(&w, "histogrammedTimeToFirstDrawKey", .launch, samples: launches, &rng)
                histogram(&w, "histogrammedOptimizedTimeToFirstDrawKey", .optimizedLaunch, samples: launches / 2, &rng)
                histogram(&w, "histogrammedResumeTime", .resume, samples: rng.poisson(Double(launches) * 2), &rng)
                if rng.chance(0.3) {
                    histogram(&w, "histogrammedExtendedLaunch", samples: launches, median: 950, width: 50, &rng)
                }
            }
            w.object("applicationResponsivenessMetrics") { w in
                histogram(&w, "histogrammedAppHangTime", .hang, samples: rng.poisson(3 * a), &rng)
            }
            w.object("applicationTimeMetrics") { w in
                w.string(
                    "cumulativeForegroundTime",
                    l.measurement(Int64(activity.foregroundLaunches * rng.int(in: 60...900)), .seconds))
                w.string(
                    "cumulativeBackgroundTime",
                    l.measurement(Int64(activity.backgroundLaunches * rng.int(in: 5...240)), .seconds))
                w.string("cumulativeBackgroundAudioTime", l.measurement(0, .seconds))
                w.string(
                    "cumulativeBackgroundLocationTime",
                    l.measurement(rng.chance(0.1) ? Int64(rng.int(in: 1...3600)) : 0, .seconds))
            }
            w.object("cpuMetrics") { w in
                w.string("cumulativeCPUTime", l.measurement(activity.draw(.cpuTime, per: 1000, &rng), .seconds))
                w.string(
                    "cumulativeCPUInstructions",
                    l.measurement(Int64(rng.int(in: 1_000_000...900_000_000)), .kiloinstructions))
            }
            w.object("gpuMetrics") { w in
                w.string("cumulativeGPUTime", l.measurement(Int64(rng.int(in: 1...900)), .seconds))
            }
            w.object("memoryMetrics") { w in
                w.string(
                    "peakMemoryUsage",
                    l.measurement(activity.draw(.peakMemory, per: 1000, &rng), .kilobytes))
                w.object("averageSuspendedMemory") { w in
                    if activity.backgroundLaunches == 0 {
                        w.string("averageValue", l.measurement(0, .kilobytes))
                        w.int("standardDeviation", -1)
                        w.int("sampleCount", 0)
                    } else {
                        w.string("averageValue", l.measurement(Int64(rng.int(in: 20_000...160_000)), .kilobytes))
                        w.thousandths("standardDeviation", Int64(rng.int(in: 0...9_000_000)))
                        w.int("sampleCount", Int64(activity.backgroundLaunches * rng.int(in: 1...40)))
                    }
                }
            }
            w.object("diskIOMetrics") { w in
                w.string(
                    "cumulativeLogicalWrites",
                    l.measurement(activity.draw(.diskWrites, per: 1000, &rng), .kilobytes))
            }
            w.object("networkTransferMetrics") { w in
                for key in [
                    "cumulativeCellularDownload", "cumulativeWifiDownload", "cumulativeCellularUpload",
                    "cumulativeWifiUpload",
                ] {
                    w.string(key, l.measurement(Int64(rng.chance(0.2) ? 0 : rng.int(in: 1...900_000)), .kilobytes))
                }
            }
            if rng.chance(0.6) {
                w.object("cellularConditionMetrics") { w in
                    w.object("cellConditionTime") { w in
                        var bars = [1, 2, 3, 4]
                        rng.shuffle(&bars)
                        w.int("histogramNumBuckets", 4)
                        w.object("histogramValue") { w in
                            for bar in bars {
                                w.object(String(bar - 1)) { w in
                                    w.int("bucketCount", Int64(rng.int(in: 1...400)))
                                    w.string("bucketStart", l.measurement(Int64(bar), .bars))
                                    w.string("bucketEnd", l.measurement(Int64(bar), .bars))
                                }
                            }
                        }
                    }
                }
            }
            w.object("displayMetrics") { w in
                w.object("averagePixelLuminance") { w in
                    w.string("averageValue", l.measurement(Int64(rng.int(in: 10...90)), .apl))
                    w.thousandths("standardDeviation", Int64(rng.int(in: 0...30_000)))
                    w.int("sampleCount", Int64(rng.int(in: 1...500)))
                }
            }
            w.object("animationMetrics") { w in
                w.string(
                    "scrollHitchTimeRatio",
                    l.measurement(activity.draw(.hitchRatio, per: 1, &rng), .millisecondsPerSecond))
            }
            w.array("signpostMetrics") { w in signposts(&w, &rng) }
        }
        return w.bytes
    }

    private func exits(
        _ w: inout JSONWriter, _ key: String, _ reasons: [String], _ counts: [String: Int]
    ) {
        w.object(key) { w in
            for reason in reasons {
                let count = counts[reason] ?? 0
                if count == 0 && device.sparse { continue }
                w.int("cumulative\(reason)ExitCount", Int64(count))
            }
        }
    }

    /// A histogram of a performance metric's samples, at today's law and its bucket width.
    private func histogram(
        _ w: inout JSONWriter, _ key: String, _ metric: PerfMetric, samples: Int, _ rng: inout SplitMix64
    ) {
        let law = activity.law(metric)
        histogram(&w, key, samples: samples, median: law.median, width: metric.bucketWidth, spread: law.width, &rng)
    }

    /// A histogram of `samples` values `median × e^(spread(U₁+U₂+U₃−1.5))`, in buckets `width` ms wide;
    /// only non-empty buckets are written, keyed by index, in shuffled key order. Left out when empty.
    private func histogram(
        _ w: inout JSONWriter, _ key: String, samples: Int, median: Double, width: Int64, spread: Double = 1.2,
        _ rng: inout SplitMix64
    ) {
        let n = min(samples, 400)
        guard n > 0 else { return }
        var counts: [Int64: Int64] = [:]
        for _ in 0..<n {
            let value = max(1, Int64(median * exp((rng.unit() + rng.unit() + rng.unit() - 1.5) * spread)))
            counts[value / width * width, default: 0] += 1
        }
        var buckets = counts.keys.sorted().enumerated().map { ($0.offset, $0.element) }
        // One draw whatever the number of buckets, so a regressed histogram (other buckets) leaves
        // every later value of the payload as the baseline's.
        var shuffler = SplitMix64(seed: rng.next())
        shuffler.shuffle(&buckets)
        w.object(key) { w in
            w.int("histogramNumBuckets", Int64(buckets.count))
            w.object("histogramValue") { w in
                for (index, start) in buckets {
                    w.object(String(index)) { w in
                        w.int("bucketCount", counts[start] ?? 0)
                        w.string("bucketStart", locale.measurement(start, .milliseconds))
                        w.string("bucketEnd", locale.measurement(start + width, .milliseconds))
                    }
                }
            }
        }
    }

    private func signposts(_ w: inout JSONWriter, _ rng: inout SplitMix64) {
        let l = locale
        for handler in activity.handlers {
            if handler.entered > 0 {
                w.object { w in
                    w.string("signpostName", "\(handler.name)Entered")
                    w.string("signpostCategory", "ExpirationHandlers")
                    w.int("totalSignpostCount", Int64(handler.entered))
                }
            }
            if handler.exited > 0 {
                w.object { w in
                    w.string("signpostName", "\(handler.name)Exited")
                    w.string("signpostCategory", "ExpirationHandlers")
                    w.int("totalSignpostCount", Int64(handler.exited))
                }
            }
        }
        if activity.restoreAttempts > 0 {
            w.object { w in
                w.string("signpostName", "RestoreAttempt")
                w.string("signpostCategory", "StateRestoration")
                w.int("totalSignpostCount", Int64(activity.restoreAttempts))
                w.object("signpostIntervalData") { w in
                    histogram(
                        &w, "histogrammedSignpostDurations", samples: activity.restoreAttempts, median: 70, width: 10,
                        &rng)
                    w.string(
                        "signpostCumulativeCPUTime",
                        l.measurement(Int64(activity.restoreAttempts * rng.int(in: 20...300)), .milliseconds))
                    w.string("signpostAverageMemory", l.measurement(Int64(rng.int(in: 30_000...200_000)), .kilobytes))
                    w.string(
                        "signpostCumulativeLogicalWrites", l.measurement(Int64(rng.int(in: 4...4_000)), .kilobytes))
                }
            }
        }
        if activity.restoreFailures > 0 {
            w.object { w in
                w.string("signpostName", "RestoreFailed")
                w.string("signpostCategory", "StateRestoration")
                w.int("totalSignpostCount", Int64(activity.restoreFailures))
            }
        }
        let feedLoads = rng.poisson(6 * device.activity)
        if feedLoads > 0 {
            w.object { w in
                w.string("signpostName", "LoadFeed")
                w.string("signpostCategory", "Feed")
                w.int("totalSignpostCount", Int64(feedLoads))
                w.object("signpostIntervalData") { w in
                    histogram(&w, "histogrammedSignpostDurations", samples: feedLoads, median: 350, width: 50, &rng)
                    w.string(
                        "signpostCumulativeCPUTime",
                        l.measurement(Int64(feedLoads * rng.int(in: 10...200)), .milliseconds))
                    w.string(
                        "signpostCumulativeHitchTimeRatio",
                        l.measurement(Int64(rng.int(in: 0...30)), .millisecondsPerSecond))
                }
            }
        }
        let thumbnails = rng.poisson(40 * device.activity)
        if thumbnails > 0 {
            w.object { w in
                w.string("signpostName", "DecodeThumbnail")
                w.string("signpostCategory", "Images")
                w.int("totalSignpostCount", Int64(thumbnails))
            }
        }
    }
}
