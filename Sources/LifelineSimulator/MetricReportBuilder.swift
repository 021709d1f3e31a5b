import Foundation
import LifelineModel

/// Writes an iOS 27 `MetricReport` (`"version": "2.0.0"`, METRICKIT-27.md) for one device-day,
/// from the same ``DayActivity`` as ``MetricBuilder``, so both formats carry the same figures.
///
/// The full-day interval entry holds every metric and the day's app states; four 3-hour slices
/// hold resource metrics; `stateEntries` split the day's terminations and hangs over app-defined
/// states: the screen where they happened (`com.example.screen`: feed, editor or settings) and the
/// device's experiment arm (`com.example.experiment.sync`: control or variant_b; the arm carries
/// every termination of the day). Reasons without a 2.0.0 successor
/// (`BackgroundURLSessionCompletionTimeout`, `BackgroundFetchCompletionTimeout`) are left out.
struct MetricReportBuilder {
    var device: Device
    var version: String
    var build: String
    var bundleIdentifier: String
    var activity: DayActivity
    /// Epoch seconds of the day's start (UTC).
    var dayStart: Int64

    /// Legacy exit reasons → 2.0.0 termination counter names.
    static let terminationNames: [String: String] = [
        "NormalApp": "normal", "MemoryResourceLimit": "memoryLimit", "BadAccess": "badAccess", "Abnormal": "abnormal",
        "IllegalInstruction": "illegalInstruction", "AppWatchdog": "watchdog", "CPUResourceLimit": "highCPU",
        "MemoryPressure": "systemPressure", "SuspendedWithLockedFile": "fileLock",
        "BackgroundTaskAssertionTimeout": "taskTimeout",
    ]
    static let foregroundNames = ["normal", "memoryLimit", "badAccess", "abnormal", "illegalInstruction", "watchdog"]
    static let backgroundNames = foregroundNames + ["highCPU", "systemPressure", "fileLock", "taskTimeout"]
    static let screens = ["feed", "editor", "settings"]

    func report(rng: inout SplitMix64) -> [UInt8] {
        var w = JSONWriter(capacity: 16_384)
        let reference: Int64 = 978_307_200
        let arm = device.index % 2 == 0 ? "control" : "variant_b"
        let screen = Self.screens[rng.int(in: 0...1)]  // where today's terminations happened
        let hangs = rng.poisson(3 * device.activity)
        w.object { w in
            w.string("version", "2.0.0")
            w.object("timeRange") { w in
                w.int("begin", dayStart - reference)
                w.int("end", dayStart + 86_400 - reference)
            }
            w.object("environment") { w in
                w.string("bundleIdentifier", bundleIdentifier)
                w.string("latestApplicationVersion", version)
                w.string("applicationBuildVersion", build)
                w.bool("includesMultipleApplicationVersions", false)
                w.string("deviceType", device.deviceType)
                w.object("osVersion") { w in
                    w.string("platform", "iPhone OS")
                    w.string("number", Self.osNumber(device.os.display))
                    w.string("buildNumber", device.os.build)
                }
                w.string("platformArchitecture", "arm64e")
                w.string("regionFormat", device.locale.regionFormat)
                w.bool("isTestFlightApp", device.isTestFlight)
                w.bool("lowPowerModeEnabled", activity.lowPower)
                w.bool("hasExceededStateLimit", false)
            }
            w.array("intervalEntries") { w in
                w.object { w in
                    measurement(&w, "duration", 86_400, "s")
                    w.array("states") { w in
                        state(&w, "com.example.screen", screen, seconds: Int64(rng.int(in: 600...20_000)))
                        state(&w, "com.example.screen", "settings", seconds: Int64(rng.int(in: 10...600)))
                        state(&w, "com.example.experiment.sync", arm, seconds: 86_400)
                    }
                    w.array("values") { w in
                        resources(&w, &rng, scale: 1)
                        terminations(&w, foreground: activity.foregroundExits, background: activity.backgroundExits)
                        histogram(&w, "hangTimeMetric", .hang, samples: hangs, &rng)
                        let launches = activity.foregroundLaunches
                        histogram(&w, "timeToFirstDrawMetric", .launch, samples: launches, &rng)
                        histogram(&w, "optimizedTimeToFirstDrawMetric", .optimizedLaunch, samples: launches / 2, &rng)
                        histogram(
                            &w, "applicationResumeTimeMetric", .resume, samples: rng.poisson(Double(launches) * 2),
                            &rng)
                        signposts(&w, &rng)
                        hitches(&w, &rng)
                    }
                }
                for _ in 0..<4 {
                    w.object { w in
                        measurement(&w, "duration", 10_800, "s")
                        w.array("states") { _ in }
                        w.array("values") { w in resources(&w, &rng, scale: 8) }
                    }
                }
            }
            w.array("stateEntries") { w in
                // The screen the terminations and hangs happened on, and the experiment arm: both
                // carry the day's terminations; settings carries none.
                for (domain, label) in [("com.example.screen", screen), ("com.example.experiment.sync", arm)] {
                    w.object { w in
                        w.object("state") { w in stateFields(&w, domain, label, seconds: nil) }
                        w.array("values") { w in
                            terminations(
                                &w, foreground: activity.foregroundExits, background: activity.backgroundExits)
                            histogram(&w, "hangTimeMetric", .hang, samples: hangs, &rng)
                        }
                    }
                }
            }
        }
        return w.bytes
    }

    /// `"17.4.1"` of `"iPhone OS 17.4.1 (21E236)"`: the same OS string once Lifeline joins the parts.
    static func osNumber(_ display: String) -> String {
        var text = Substring(display)
        if text.hasPrefix("iPhone OS ") { text = text.dropFirst("iPhone OS ".count) }
        return String(text.prefix { $0 != " " })
    }

    private func measurement(_ w: inout JSONWriter, _ key: String?, _ value: Int64, _ unit: String) {
        w.object(key) { w in
            w.int("value", value)
            w.string("unit", unit)
        }
    }

    private func state(_ w: inout JSONWriter, _ domain: String, _ label: String, seconds: Int64) {
        w.object { w in stateFields(&w, domain, label, seconds: seconds) }
    }

    private func stateFields(_ w: inout JSONWriter, _ domain: String, _ label: String, seconds: Int64?) {
        w.string("domain", domain)
        w.string("label", label)
        if let seconds { measurement(&w, "duration", seconds, "s") }
        w.object("stableMetadata") { w in
            if domain == "com.example.screen" {
                w.object("userTier") { w in w.string("string", device.index % 5 == 0 ? "premium" : "free") }
            }
        }
    }

    /// Resource metrics (a slice carries about `1 / scale` of a day's).
    private func resources(_ w: inout JSONWriter, _ rng: inout SplitMix64, scale: Int) {
        let s = Int64(max(1, scale))
        w.object { w in
            w.object("cpuTimeMetric") { w in
                measurement(&w, "value", activity.draw(.cpuTime, per: 1000, &rng) / s, "s")
            }
        }
        w.object { w in
            w.object("cpuInstructionsCountMetric") { w in
                w.int("value", Int64(rng.int(in: 1...900)) * 1_000_000_000 / s)
            }
        }
        w.object { w in
            w.object("peakMemoryMetric") { w in
                measurement(&w, "value", activity.draw(.peakMemory, per: 1e6, &rng), "MB")
            }
        }
        w.object { w in
            w.object("logicalDiskWritesMetric") { w in
                measurement(&w, "value", activity.draw(.diskWrites, per: 1e6, &rng) / s, "MB")
            }
        }
        w.object { w in
            w.object("totalForegroundTimeMetric") { w in
                measurement(&w, "value", Int64(activity.foregroundLaunches * rng.int(in: 60...900)) / s, "s")
            }
        }
        w.object { w in
            w.object("totalBackgroundTimeMetric") { w in
                measurement(&w, "value", Int64(activity.backgroundLaunches * rng.int(in: 5...240)) / s, "s")
            }
        }
    }

    private func terminations(_ w: inout JSONWriter, foreground: [String: Int], background: [String: Int]) {
        for (key, names, counts) in [
            ("foregroundTerminationMetric", Self.foregroundNames, foreground),
            ("backgroundTerminationMetric", Self.backgroundNames, background),
        ] {
            var byName: [String: Int] = [:]
            for (reason, count) in counts {
                if let name = Self.terminationNames[reason] { byName[name, default: 0] += count }
            }
            w.object { w in
                w.object(key) { w in
                    // 2.0.0 writes every counter, zeros included.
                    for name in names { w.int("\(name)TerminationCount", Int64(byName[name] ?? 0)) }
                }
            }
        }
    }

    /// A histogram of a performance metric's samples, at its median of the day and bucket width.
    private func histogram(
        _ w: inout JSONWriter, _ key: String, _ metric: PerfMetric, samples: Int, _ rng: inout SplitMix64
    ) {
        let law = activity.law(metric)
        histogram(&w, key, samples: samples, median: law.median, width: metric.bucketWidth, spread: law.width, &rng)
    }

    /// `hitchTimeMetric`: the hitch ratio (drawn as the legacy scroll hitch ratio), the animation
    /// time it is measured over, and the hitch time they imply.
    private func hitches(_ w: inout JSONWriter, _ rng: inout SplitMix64) {
        let ratio = activity.draw(.hitchRatio, per: 1, &rng)
        let animation = Int64(rng.int(in: 30...1_800))
        w.object { w in
            w.object("hitchTimeMetric") { w in
                measurement(&w, "ratio", ratio, "ms per s")
                measurement(&w, "totalHitchTime", ratio * animation, "ms")
                measurement(&w, "totalAnimationTime", animation, "s")
            }
        }
    }

    /// A histogram of `samples` values `median × e^(spread(U₁+U₂+U₃−1.5))`, buckets `width` ms wide
    /// (inclusive bounds).
    private func histogram(
        _ w: inout JSONWriter, _ key: String?, samples: Int, median: Double, width: Int64, spread: Double = 1.2,
        _ rng: inout SplitMix64, wrapped: Bool = true
    ) {
        let n = min(samples, 400)
        var counts: [Int64: Int64] = [:]
        for _ in 0..<n {
            let value = max(1, Int64(median * exp((rng.unit() + rng.unit() + rng.unit() - 1.5) * spread)))
            counts[value / width * width, default: 0] += 1
        }
        let body: (inout JSONWriter) -> Void = { w in
            w.array("buckets") { w in
                for start in counts.keys.sorted() {
                    w.object { w in
                        w.int("count", counts[start] ?? 0)
                        measurement(&w, "lowerBound", start, "ms")
                        measurement(&w, "upperBound", start + width - 1, "ms")
                    }
                }
            }
        }
        if wrapped {
            w.object { w in w.object(key) { w in w.object("histogram", body) } }
        } else {
            w.object(key, body)
        }
    }

    private func signposts(_ w: inout JSONWriter, _ rng: inout SplitMix64) {
        func signpost(
            _ category: String, _ name: String, _ count: Int, durations: (median: Double, width: Int64)? = nil
        ) {
            w.object { w in
                w.object("signpostIntervalMetric") { w in
                    w.string("signpostCategory", category)
                    w.string("signpostName", name)
                    w.int("totalCount", Int64(count))
                    if let durations, count > 0 {
                        histogram(
                            &w, "signpostDuration", samples: count, median: durations.median, width: durations.width,
                            &rng, wrapped: false)
                    }
                }
            }
        }
        for handler in activity.handlers {
            if handler.entered > 0 { signpost("ExpirationHandlers", "\(handler.name)Entered", handler.entered) }
            if handler.exited > 0 { signpost("ExpirationHandlers", "\(handler.name)Exited", handler.exited) }
        }
        if activity.restoreAttempts > 0 {
            signpost("StateRestoration", "RestoreAttempt", activity.restoreAttempts, durations: (70, 10))
        }
        if activity.restoreFailures > 0 { signpost("StateRestoration", "RestoreFailed", activity.restoreFailures) }
    }
}
