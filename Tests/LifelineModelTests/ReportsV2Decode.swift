import Foundation
import LifelineModel
import Testing

/// The real iOS 27 captures of `ios27/` (METRICKIT-27.md) decode into the legacy model.
@Suite("iOS 27 reports (2.0.0) decode into the same model")
struct ReportsV2Decode {
    static let dayReport = "ios27/HitchScope__metric-20260913T053136.822.json"
    static let snapshot = "ios27/HitchScope__metric-20260913T053136.820.json"
    static let crash = "ios27/HitchScope__diagnostic-20260912T110757.564.json"
    static let memory = "ios27/HitchScope__diagnostic-20260912T172435.024.json"

    static func exits(_ exits: [ExitCount]) -> [String: Int64] {
        var sums: [String: Int64] = [:]
        for exit in exits { sums["\(exit.state.rawValue).\(exit.reason)", default: 0] += exit.count }
        return sums.filter { $0.value > 0 }
    }

    @Test("the day report: time range, device, mapped exit reasons, hang and launch histograms, times")
    func dayReport() throws {
        let metric = try Fixtures.metric(Self.dayReport)
        #expect(metric.format == .v2)
        #expect(metric.isDeviceDay)
        // timeRange.begin 810878400 s after 2001-01-01 = 2026-09-12 04:00 UTC (local midnight).
        #expect(metric.begin?.epochSeconds == 1_789_185_600)
        #expect(metric.end?.epochSeconds == 1_789_272_000)
        #expect(metric.meta.appVersion == "1.0")
        #expect(metric.meta.appBuildVersion == "5")
        #expect(metric.meta.osVersion == "iPhone OS 27.0 (24A435)")
        #expect(metric.meta.deviceType == "iPhone15,2")
        #expect(metric.meta.bundleIdentifier == "com.hitchscope")
        #expect(
            Self.exits(metric.exits) == [
                "foreground.MemoryResourceLimit": 8, "foreground.NormalApp": 6, "background.NormalApp": 1,
                "background.MemoryPressure": 1,
            ])
        // Zeros are present in 2.0.0 and kept as zeros (never stored).
        #expect(metric.exits.contains { $0.reason == "BackgroundTaskAssertionTimeout" && $0.count == 0 })
        let hang = try #require(
            metric.histograms.first { $0.name == "applicationResponsivenessMetrics.histogrammedAppHangTime" })
        #expect(hang.histogram.buckets.count == 28)
        #expect(hang.histogram.buckets.map(\.count).reduce(0, +) == 291)
        #expect(hang.histogram.buckets.first == HistogramBucket(start: 280, end: 289, count: 1))
        #expect(hang.histogram.unit == .milliseconds)
        let launch = try #require(
            metric.histograms.first { $0.name == "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey" })
        #expect(launch.histogram.buckets.map(\.count).reduce(0, +) == 6)
        func scalar(_ name: String) -> Double? { metric.scalars.first { $0.name == name }?.measurement.value }
        #expect(scalar("applicationTimeMetrics.cumulativeForegroundTime") == 1_491_000)  // 1491 s in ms
        #expect(scalar("applicationTimeMetrics.cumulativeBackgroundTime") == 29_000)
        #expect(scalar("memoryMetrics.peakMemoryUsage") == 22_785_000)  // 22.785 MB in bytes
        #expect(scalar("cpuMetrics.cumulativeCPUInstructions") == 8_442_993_041_000)
        let suspended = try #require(metric.scalars.first { $0.name == "memoryMetrics.averageSuspendedMemory" })
        #expect(suspended.sampleCount == 33)
        #expect(suspended.measurement.raw == "14.886 MB")
        #expect(metric.slices.count == 5)
        #expect(metric.slices.allSatisfy { $0.durationSeconds == 10_800 })
        #expect(metric.slices.first?.scalars.contains { $0.name == "cpuMetrics.cumulativeCPUTime" } == true)
    }

    @Test(
        "bucket bounds as measurement objects: units scaled, an escaped unit, none, an unknown one, an implausible value"
    )
    func bucketBoundObjects() throws {
        func bound(_ value: String, _ unit: String?) -> String {
            unit.map { #"{"value": \#(value), "unit": "\#($0)"}"# } ?? #"{"value": \#(value)}"#
        }
        let buckets = [
            (bound("1", "s"), bound("2", "s"), 3), (bound("250", #"m\u0073"#), bound("260", "ms"), 4),
            (bound("5", nil), bound("6", ""), 5), (bound("7", "furlongs"), bound("8", "ms"), 6),
            (bound("1e300", "s"), bound("9", "ms"), 7),
        ].map { #"{"count": \#($0.2), "lowerBound": \#($0.0), "upperBound": \#($0.1)}"# }
        let json = """
            {"version": "2.0.0", "timeRange": {"begin": 812505600, "end": 812592000},
             "environment": {"bundleIdentifier": "com.example.app", "latestApplicationVersion": "1.0",
               "deviceType": "iPhone17,5", "osVersion": {"platform": "iPhone OS", "number": "27.0", "buildNumber": "24A1"}},
             "intervalEntries": [{"duration": {"value": 86400, "unit": "s"}, "states": [],
               "values": [{"hangTimeMetric": {"histogram": {"buckets": [\(buckets.joined(separator: ", "))]}}}]}]}
            """
        let documents = try decodeJSON(json, family: .metric)
        guard case .metric(let metric) = try #require(documents.first).content else {
            Issue.record("expected a metric report")
            return
        }
        let hang = try #require(
            metric.histograms.first { $0.name == "applicationResponsivenessMetrics.histogrammedAppHangTime" })
        // Sorted by start, an unread start last; the implausible bound drops its bucket.
        #expect(
            hang.histogram.buckets == [
                HistogramBucket(start: 5, end: 6, count: 5), HistogramBucket(start: 250, end: 260, count: 4),
                HistogramBucket(start: 1_000, end: 2_000, count: 3), HistogramBucket(start: nil, end: 8, count: 6),
            ])
        #expect(hang.histogram.unit == .milliseconds)
        #expect(documents[0].unparsedMeasurements == 1)
        #expect(documents[0].droppedValues == 1)
    }

    @Test("the store's form: 2.0.0 inclusive millisecond buckets end where legacy ones do; bars and legacy unchanged")
    func legacyBucketBounds() throws {
        let metric = try Fixtures.metric(Self.dayReport)
        let stored = metric.withLegacyBucketBounds
        let hang = try #require(
            stored.histograms.first { $0.name == "applicationResponsivenessMetrics.histogrammedAppHangTime" })
        #expect(hang.histogram.buckets.first == HistogramBucket(start: 280, end: 290, count: 1))
        let bars = try #require(stored.histograms.first { $0.name == "cellularConditionMetrics.cellConditionTime" })
        #expect(bars.histogram == metric.histograms.first { $0.name == bars.name }?.histogram)
        let premiumHang = stored.stateEntries.flatMap(\.histograms).first {
            $0.name == "applicationResponsivenessMetrics.histogrammedAppHangTime"
        }
        #expect(premiumHang?.histogram.buckets.first?.end == 350)  // 340–349 ms
        let legacy = try Fixtures.metric("metrics/lifeline-authored__ios17-full.json")
        #expect(legacy.withLegacyBucketBounds == legacy)
    }

    @Test("app states: the full entry's states with their time, and each state's terminations and hangs")
    func appStates() throws {
        let metric = try Fixtures.metric(Self.dayReport)
        #expect(metric.stateEntries.count == 4)
        let premium = try #require(
            metric.stateEntries.first {
                $0.state
                    == ReportedState(
                        domain: "com.hitchscope.example.screen", label: "home", metadata: #"{"userTier":"premium"}"#)
            })
        #expect(abs((premium.activeSeconds ?? 0) - 64_271.29) < 0.01)
        #expect(
            Self.exits(premium.exits) == [
                "foreground.MemoryResourceLimit": 2, "foreground.NormalApp": 1, "background.MemoryPressure": 1,
            ])
        let hang = try #require(
            premium.histograms.first { $0.name == "applicationResponsivenessMetrics.histogrammedAppHangTime" })
        #expect(hang.histogram.buckets.map(\.count).reduce(0, +) == 2)
        // The same domain and label without metadata is another state, with no metrics of its own.
        let plainHome = try #require(
            metric.stateEntries.first {
                $0.state == ReportedState(domain: "com.hitchscope.example.screen", label: "home")
            })
        #expect(plainHome.exits.isEmpty && plainHome.activeSeconds == 86_400)
    }

    @Test("byStateReportingDomain (states as objects keyed by domain) gives the same payload")
    func byStateReportingDomain() throws {
        let bytes = try Fixtures.bytes(Self.dayReport)
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        var json = try #require(object as? [String: Any])
        func byDomain(_ list: [[String: Any]], state: ([String: Any]) -> [String: Any]?) -> [String: [[String: Any]]] {
            Dictionary(grouping: list) { (state($0)?["domain"] as? String) ?? "" }
        }
        let entries = try #require(json["stateEntries"] as? [[String: Any]])
        json["stateEntries"] = byDomain(entries) { $0["state"] as? [String: Any] }
        var intervals = try #require(json["intervalEntries"] as? [[String: Any]])
        for index in intervals.indices {
            let states = intervals[index]["states"] as? [[String: Any]] ?? []
            intervals[index]["states"] = byDomain(states) { $0 }
        }
        json["intervalEntries"] = intervals
        let variant = try JSONSerialization.data(withJSONObject: json)
        let documents = try MetricKitDecoder.decode([UInt8](variant), family: .metric)
        guard case .metric(let decoded) = try #require(documents.first).content else {
            Issue.record("not a metric payload")
            return
        }
        let original = try Fixtures.metric(Self.dayReport)
        // Same figures (key order inside objects is free in JSON, so compare as sets and sums).
        #expect(Self.exits(decoded.exits) == Self.exits(original.exits))
        func histograms(_ list: [NamedHistogram]) -> [String: Histogram] {
            Dictionary(list.map { ($0.name, $0.histogram) }, uniquingKeysWith: { a, _ in a })
        }
        #expect(histograms(decoded.histograms) == histograms(original.histograms))
        #expect(Set(decoded.scalars.map(\.name)) == Set(original.scalars.map(\.name)))
        func states(_ entries: [StateEntry]) -> [ReportedState: [String: Int64]] {
            Dictionary(entries.map { ($0.state, Self.exits($0.exits)) }, uniquingKeysWith: { a, _ in a })
        }
        #expect(states(decoded.stateEntries) == states(original.stateEntries))
        #expect(
            Dictionary(decoded.stateEntries.map { ($0.state, $0.activeSeconds) }, uniquingKeysWith: { a, _ in a })
                == Dictionary(
                    original.stateEntries.map { ($0.state, $0.activeSeconds) }, uniquingKeysWith: { a, _ in a }))
        #expect(decoded.stateEntries.count == 4)
    }

    @Test(
        "termination counters: the suffix cut from ASCII keys as bytes, from escaped and non-ASCII ones as Characters, alike"
    )
    func terminationNames() throws {
        let counters = #"""
            {"memoryLimitTerminationCount": 1, "newThingTerminationCount": 2, "odd": 3, "TerminationCount": 4,
             "newThing\u0054erminationCount": 5, "spätTerminationCount": 6, "spät\u0054erminationCount": 7}
            """#
        let report = """
            {"version": "2.0.0", "timeRange": {"begin": 812505600, "end": 812592000},
             "environment": {"bundleIdentifier": "com.example.app", "latestApplicationVersion": "1.0",
                             "deviceType": "iPhone17,5"},
             "intervalEntries": [{"duration": {"value": 86400, "unit": "s"}, "states": [],
                                  "values": [{"foregroundTerminationMetric": \(counters)}]}]}
            """
        let documents = try MetricKitDecoder.decode([UInt8](report.utf8), family: .metric)
        guard case .metric(let metric) = try #require(documents.first).content else {
            Issue.record("not a metric report")
            return
        }
        // The name a counter without the suffix keeps is capitalized; a key that is only the
        // suffix names nothing.
        #expect(
            Self.exits(metric.exits) == [
                "foreground.MemoryResourceLimit": 1, "foreground.NewThing": 7, "foreground.Odd": 3,
                "foreground.Spät": 13,
            ])
        #expect(metric.exits.count == 6)
    }

    @Test("the zero-length report is the disk-space snapshot: stored, not a device-day")
    func snapshot() throws {
        let metric = try Fixtures.metric(Self.snapshot)
        #expect(!metric.isDeviceDay)
        #expect(metric.begin?.epochSeconds == metric.end?.epochSeconds)
        #expect(metric.exits.isEmpty)
        #expect(
            metric.scalars.map(\.name).sorted() == [
                "totalDiskSpaceCapacityMetric.capacity", "totalDiskSpaceCapacityMetric.spaceUsed",
                "totalFileCountMetric.binaryFileCount", "totalFileCountMetric.dataFileCount",
                "totalFileSizeMetric.binaryFileSize", "totalFileSizeMetric.cacheFolderSize",
                "totalFileSizeMetric.cloneSize", "totalFileSizeMetric.dataFileSize",
            ])
        #expect(metric.scalars.first { $0.name == "totalDiskSpaceCapacityMetric.capacity" }?.measurement.value == 128e9)
        #expect(metric.scalars.first { $0.name == "totalFileCountMetric.dataFileCount" }?.measurement.value == 43)
    }

    @Test("a crash report: fields, environment, frames named from binaryInfo; same fingerprint as legacy")
    func crash() throws {
        let payload = try Fixtures.diagnostics(Self.crash)
        #expect(payload.format == .v2)
        let crash = try #require(payload.diagnostics.first)
        #expect(payload.diagnostics.count == 1)
        #expect(crash.kind == .crash)
        #expect(crash.version == "2.0.0")
        #expect(crash.exceptionType == 6)
        #expect(crash.signal == 5)
        #expect(crash.terminationReason == "Namespace SIGNAL, Code 0x5")
        #expect(crash.meta.pid == 3_850)
        #expect(crash.meta.appBuildVersion == "3")
        #expect(crash.meta.osVersion == "iPhone OS 27.0 (24A435)")
        #expect(crash.signpostData?.hasPrefix("[") == true)
        let threads = crash.callStackTree?.callStacks ?? []
        let frames = threads.flatMap { $0.frames }
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0.frame.binaryUUID == nil || $0.frame.binaryName != nil })
        #expect(!crash.signature.fingerprint.isEmpty)

        // The same diagnostic in the legacy shape (names on the frames, legacy keys) groups alike.
        let bytes = try Fixtures.bytes(Self.crash)
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        let json = try #require(object as? [String: Any])
        let body = try #require(json["crashDiagnostic"] as? [String: Any])
        let tree = try #require(body["callStackTree"] as? [String: Any])
        let names = Dictionary(
            uniqueKeysWithValues: (tree["binaryInfo"] as? [[String: Any]] ?? []).compactMap { info in
                (info["uuid"] as? String).map { ($0, info["name"] as? String ?? "") }
            })
        func legacy(_ frame: [String: Any]) -> [String: Any] {
            var copy = frame
            if let uuid = frame["binaryUUID"] as? String { copy["binaryName"] = names[uuid] }
            copy["subFrames"] = (frame["subFrames"] as? [[String: Any]])?.map(legacy)
            return copy
        }
        let stacks = (tree["callStackThreads"] as? [[String: Any]] ?? []).map { thread -> [String: Any] in
            [
                "threadAttributed": thread["threadAttributed"] ?? false,
                "callStackRootFrames": (thread["rootFrames"] as? [[String: Any]] ?? []).map(legacy),
            ]
        }
        let bare: [String: Any] = [
            "version": "1.0.0",
            "callStackTree": ["callStackPerThread": tree["callStackPerThread"] ?? true, "callStacks": stacks],
            "diagnosticMetaData": [
                "exceptionType": 6, "exceptionCode": 1, "signal": 5, "terminationReason": "Namespace SIGNAL, Code 0x5",
                "appVersion": "1.0",
            ],
        ]
        let documents = try MetricKitDecoder.decode(
            [UInt8](try JSONSerialization.data(withJSONObject: bare)), family: .diagnostic)
        guard case .diagnostic(let legacyPayload) = try #require(documents.first).content else {
            Issue.record("not a diagnostic")
            return
        }
        #expect(legacyPayload.diagnostics.first?.signature == crash.signature)
    }

    @Test("a memory exception report: the new kind, its named frames and the states before it")
    func memoryException() throws {
        let payload = try Fixtures.diagnostics(Self.memory)
        let diagnostic = try #require(payload.diagnostics.first)
        #expect(diagnostic.kind == .memoryException)
        #expect(diagnostic.meta.pid == 4_635)
        #expect(
            Set(diagnostic.appStates) == [
                ReportedState(domain: "com.hitchscope.example.experiment.checkout_redesign", label: "variant_b"),
                ReportedState(domain: "com.hitchscope.example.screen", label: "home"),
                ReportedState(
                    domain: "com.hitchscope.example.screen", label: "home", metadata: #"{"userTier":"premium"}"#),
            ])
        let names = Set(diagnostic.callStackTree?.callStacks.flatMap(\.frames).compactMap(\.frame.binaryName) ?? [])
        #expect(names.contains("HitchScopeExample"))
        #expect(!diagnostic.signature.fingerprint.isEmpty)
    }

    @Test("legacy and 2.0.0 documents mix in one array; a 2.0.0 metric report on the diagnostic family is refused")
    func mixedBodies() throws {
        let legacy = try Fixtures.bytes("metrics/lifeline-authored__ios17-full.json")
        let report = try Fixtures.bytes(Self.dayReport)
        let body = Array("[".utf8) + legacy + Array(",".utf8) + report + Array("]".utf8)
        let documents = try MetricKitDecoder.decode(body, family: .metric)
        #expect(documents.count == 2)
        guard case .metric(let first) = documents[0].content, case .metric(let second) = documents[1].content else {
            Issue.record("not two metric payloads")
            return
        }
        #expect(first.format == .legacy && second.format == .v2)
        #expect(throws: DecodeError.self) { try MetricKitDecoder.decode(report, family: .diagnostic) }
        let crash = try Fixtures.bytes(Self.crash)
        #expect(throws: DecodeError.self) { try MetricKitDecoder.decode(crash, family: .metric) }
    }

    @Test("timeRange as ISO 8601 strings (an encoder set to .iso8601) reads the same instant")
    func isoDates() throws {
        let text = String(decoding: try Fixtures.bytes(Self.dayReport), as: UTF8.self)
            .replacingOccurrences(of: #""begin" : 810878400"#, with: #""begin" : "2026-09-12T04:00:00Z""#)
            .replacingOccurrences(of: #""begin":810878400"#, with: #""begin":"2026-09-12T04:00:00Z""#)
        #expect(text.contains("2026-09-12T04:00:00Z"))
        let documents = try MetricKitDecoder.decode(Array(text.utf8), family: .metric)
        guard case .metric(let metric) = try #require(documents.first).content else { return }
        #expect(metric.begin?.epochSeconds == 1_789_185_600)
    }
}
