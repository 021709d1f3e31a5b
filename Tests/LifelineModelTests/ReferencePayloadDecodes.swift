import LifelineModel
import Testing

/// Builds documents shaped like `shared/bench/make_payloads.py` (the reference load payload).
struct ReferencePayload {
    /// A small deterministic generator (SplitMix64).
    struct Generator {
        var state: UInt64
        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return range.lowerBound + Int(z % UInt64(range.count))
        }
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

    var generator: Generator
    /// Expected values, recorded while generating.
    var foregroundExits: [String: Int] = [:]
    var backgroundExits: [String: Int] = [:]
    var histogramTotals: [String: Int] = [:]
    var peakMemoryKB = 0

    init(seed: UInt64) { generator = Generator(state: seed) }

    /// `12,345` grouping, as Python's `f"{n:,}"`.
    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    mutating func histogram(_ name: String, _ buckets: Int, _ unit: String, start: Int = 0) -> String {
        var entries: [String] = []
        var s = start
        var total = 0
        for index in 0..<buckets {
            let width = [10, 20, 50, 100][generator.next(0...3)]
            let count = generator.next(1...5000)
            total += count
            entries.append(
                #""\#(index)": {"bucketStart": "\#(Self.grouped(s)) \#(unit)", "bucketEnd": "\#(Self.grouped(s + width)) \#(unit)", "bucketCount": \#(count)}"#
            )
            s += width
        }
        // Shuffle the key order like the reference generator.
        for index in stride(from: entries.count - 1, to: 0, by: -1) {
            entries.swapAt(index, generator.next(0...index))
        }
        histogramTotals[name] = total
        return #"{"histogramNumBuckets": \#(buckets), "histogramValue": {\#(entries.joined(separator: ", "))}}"#
    }

    mutating func document(day: Int) -> String {
        var fg: [String] = []
        for reason in Self.foregroundReasons {
            let count = generator.next(0...9)
            foregroundExits[reason] = count
            fg.append(#""cumulative\#(reason)ExitCount": \#(count)"#)
        }
        var bg: [String] = []
        for reason in Self.backgroundReasons {
            let count = generator.next(0...20)
            backgroundExits[reason] = count
            bg.append(#""cumulative\#(reason)ExitCount": \#(count)"#)
        }
        peakMemoryKB = generator.next(10_000...1_000_000)
        let entered = generator.next(0...30)
        var signposts = [
            #"{"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerEntered", "totalSignpostCount": \#(entered)}"#,
            #"{"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerExited", "totalSignpostCount": \#(max(0, entered - 1))}"#,
            #"{"signpostCategory": "StateRestoration", "signpostName": "RestoreAttempt", "totalSignpostCount": 40, "signpostIntervalData": {"histogrammedSignpostDurations": \#(histogram("restore", 5, "ms")), "signpostCumulativeCPUTime": "1,234 ms", "signpostAverageMemory": "45,678 kB", "signpostCumulativeLogicalWrites": "999 kB"}}"#,
            #"{"signpostCategory": "StateRestoration", "signpostName": "RestoreFailed", "totalSignpostCount": 1}"#,
        ]
        for j in 0..<4 {
            signposts.append(
                #"{"signpostCategory": "Feature\#(j % 3)", "signpostName": "Work\#(j)", "totalSignpostCount": \#(generator.next(1...999)), "signpostIntervalData": {"histogrammedSignpostDurations": \#(histogram("work\(j)", 5, "ms")), "signpostCumulativeCPUTime": "\#(Self.grouped(generator.next(1...9999))) ms"}}"#
            )
        }
        let dd = day < 10 ? "0\(day)" : "\(day)"
        return #"""
            {
              "appVersion": "4.2.1",
              "timeStampBegin": "2026-10-\#(dd) 00:00:00 +0000", "timeStampEnd": "2026-10-\#(dd) 23:59:00 +0000",
              "metaData": {"appBuildVersion": "4242", "osVersion": "iPhone OS 17.4 (21E219)", "regionFormat": "US",
                           "platformArchitecture": "arm64e", "deviceType": "iPhone15,3", "bundleIdentifier": "com.example.app",
                           "isTestFlightApp": false, "lowPowerModeEnabled": true, "pid": 4321},
              "applicationExitMetrics": {"foregroundExitData": {\#(fg.joined(separator: ", "))},
                                         "backgroundExitData": {\#(bg.joined(separator: ", "))}},
              "applicationLaunchMetrics": {"histogrammedTimeToFirstDrawKey": \#(histogram("ttfd", 14, "ms", start: 200)),
                                           "histogrammedResumeTime": \#(histogram("resume", 10, "ms")),
                                           "histogrammedOptimizedTimeToFirstDrawKey": \#(histogram("optimized", 8, "ms", start: 150)),
                                           "histogrammedExtendedLaunch": \#(histogram("extended", 6, "ms", start: 300))},
              "applicationResponsivenessMetrics": {"histogrammedAppHangTime": \#(histogram("hang", 16, "ms", start: 250))},
              "applicationTimeMetrics": {"cumulativeForegroundTime": "12,345 sec", "cumulativeBackgroundTime": "23,456 sec",
                                         "cumulativeBackgroundAudioTime": "0 sec", "cumulativeBackgroundLocationTime": "0 sec"},
              "cpuMetrics": {"cumulativeCPUTime": "45,678 sec", "cumulativeCPUInstructions": "123,456,789 kiloinstructions"},
              "gpuMetrics": {"cumulativeGPUTime": "1,234 sec"},
              "memoryMetrics": {"peakMemoryUsage": "\#(Self.grouped(peakMemoryKB)) kB",
                                "averageSuspendedMemory": {"averageValue": "54,321 kB", "standardDeviation": 1234.567, "sampleCount": 321}},
              "diskIOMetrics": {"cumulativeLogicalWrites": "98,765 kB"},
              "networkTransferMetrics": {"cumulativeCellularDownload": "1,000 kB", "cumulativeWifiDownload": "2,000 kB",
                                         "cumulativeCellularUpload": "3,000 kB", "cumulativeWifiUpload": "4,000 kB"},
              "cellularConditionMetrics": {"cellConditionTime": \#(histogram("bars", 4, "bars"))},
              "displayMetrics": {"averagePixelLuminance": {"averageValue": "42 apl", "standardDeviation": 0, "sampleCount": 77}},
              "animationMetrics": {"scrollHitchTimeRatio": "7 ms per s"},
              "signpostMetrics": [\#(signposts.joined(separator: ",\n    "))]
            }
            """#
    }
}

@Suite("The reference load payload decodes")
struct ReferencePayloadDecodes {
    @Test("two generated reference payloads decode with every section", arguments: [UInt64(1), 2])
    func referencePayload(_ seed: UInt64) throws {
        var reference = ReferencePayload(seed: seed)
        let json = reference.document(day: Int(seed) + 2)
        let documents = try decodeJSON(json, family: .metric)
        #expect(documents.count == 1)
        #expect(documents[0].unparsedMeasurements == 0)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        #expect(payload.meta.appVersion == "4.2.1")
        #expect(payload.meta.pid == 4321)
        #expect(payload.meta.lowPowerModeEnabled == true)
        #expect(payload.begin?.epochSeconds == 1_790_812_800 + 86_400 * (Int64(seed) + 1))
        #expect(payload.exits.count == 19)
        for (reason, count) in reference.foregroundExits {
            #expect(payload.exitCount(.foreground, reason) == Int64(count))
        }
        for (reason, count) in reference.backgroundExits {
            #expect(payload.exitCount(.background, reason) == Int64(count))
        }
        #expect(payload.histograms.count == 6)
        let names: [String: String] = [
            "ttfd": "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey",
            "resume": "applicationLaunchMetrics.histogrammedResumeTime",
            "optimized": "applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey",
            "extended": "applicationLaunchMetrics.histogrammedExtendedLaunch",
            "hang": "applicationResponsivenessMetrics.histogrammedAppHangTime",
            "bars": "cellularConditionMetrics.cellConditionTime",
        ]
        for (short, name) in names {
            let histogram = try #require(payload.histogram(name))
            #expect(histogram.totalCount == Int64(reference.histogramTotals[short] ?? -1))
            let starts = histogram.buckets.compactMap(\.start)
            #expect(starts == starts.sorted())
            #expect(starts.count == histogram.buckets.count)
        }
        #expect(
            payload.histogram("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey")?.buckets.first?.start == 200)
        #expect(payload.histogram("cellularConditionMetrics.cellConditionTime")?.unit == .bars)
        #expect(payload.signposts.count == 8)
        #expect(payload.signposts[2].durations?.totalCount == Int64(reference.histogramTotals["restore"] ?? -1))
        #expect(payload.signposts[2].averageMemory?.value == 45_678_000)
        #expect(
            payload.scalar("memoryMetrics.peakMemoryUsage")?.measurement.value == Double(reference.peakMemoryKB * 1000))
        #expect(payload.scalar("cpuMetrics.cumulativeCPUInstructions")?.measurement.value == 123_456_789_000)
        #expect(payload.scalar("gpuMetrics.cumulativeGPUTime")?.measurement.value == 1_234_000)
        #expect(payload.scalar("networkTransferMetrics.cumulativeWifiUpload")?.measurement.value == 4_000_000)
        let luminance = try #require(payload.scalar("displayMetrics.averagePixelLuminance"))
        #expect(luminance.measurement.unit == .apl)
        #expect(luminance.measurement.value == 42)
        #expect(luminance.standardDeviation == 0)
        #expect(luminance.sampleCount == 77)
        #expect(payload.scalar("animationMetrics.scrollHitchTimeRatio")?.measurement.value == 7)
        // 4 time + 2 cpu + 1 gpu + 2 memory + 1 disk + 4 network + 1 display + 1 animation.
        #expect(payload.scalars.count == 16)
    }
}
