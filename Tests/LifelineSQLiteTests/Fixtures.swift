import Crypto
import Foundation
import LifelineIngest
import LifelineModel
import LifelineSQLite

enum Fixtures {
    static let app = "com.example.app"

    static func sha256(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Array(text.utf8))) }

    static func measurement(_ value: Double?, _ unit: MeasurementUnit?, _ raw: String) -> LifelineModel.Measurement {
        LifelineModel.Measurement(value: value, unit: unit, raw: raw)
    }

    static func histogram(_ buckets: [(Double?, Double?, Int64)], unit: MeasurementUnit? = .milliseconds) -> Histogram {
        Histogram(unit: unit, buckets: buckets.map { HistogramBucket(start: $0.0, end: $0.1, count: $0.2) })
    }

    /// A small metric payload with known contents.
    static func metric(version: String = "4.1.0", day: Int = 21) -> MetricPayload {
        let begin = Int64(1_571_641_200) + Int64(day - 21) * 86_400  // 2019-10-21 07:00:00 UTC
        return MetricPayload(
            begin: Timestamp(epochSeconds: begin, raw: "2019-10-\(day) 07:00:00 +0000"),
            end: Timestamp(epochSeconds: begin + 86_340, raw: "2019-10-\(day + 1) 06:59:00 +0000"),
            meta: DeviceMeta(
                appVersion: version, appBuildVersion: "412", osVersion: "iPhone OS 17.4 (21E219)",
                deviceType: "iPhone15,2", regionFormat: "US", platformArchitecture: "arm64e",
                bundleIdentifier: app),
            exits: [
                ExitCount(state: .foreground, reason: "NormalApp", count: 5),
                ExitCount(state: .background, reason: "MemoryPressure", count: 13),
                ExitCount(state: .background, reason: "BackgroundTaskAssertionTimeout", count: 3),
                ExitCount(state: .foreground, reason: "BadAccess", count: 0),
            ],
            signposts: [
                SignpostMetric(category: "ExpirationHandlers", name: "DatabaseExpirationHandlerEntered", totalCount: 7),
                SignpostMetric(
                    category: "StateRestoration", name: "RestoreAttempt", totalCount: 40,
                    durations: histogram([(0, 10, 30), (10, 20, 10)]),
                    cumulativeCPUTime: measurement(1_200, .milliseconds, "1,200 ms"),
                    averageMemory: measurement(2_048_000, .bytes, "2,000 kB")),
            ],
            histograms: [
                NamedHistogram(
                    name: "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey",
                    histogram: histogram([(1_000, 1_010, 50), (1_010, 1_020, 60), (2_000, 2_000, 1)]))
            ],
            scalars: [
                ScalarMetric(
                    name: "memoryMetrics.peakMemoryUsage", measurement: measurement(204_800_000, .bytes, "200,000 kB")),
                ScalarMetric(
                    name: "memoryMetrics.averageSuspendedMemory",
                    measurement: measurement(102_400_000, .bytes, "100,000 kB"),
                    standardDeviation: 0.5, sampleCount: 500),
                ScalarMetric(name: "cpuMetrics.cumulativeCPUTime", measurement: measurement(nil, nil, "12 foos")),
            ])
    }

    static func crash(version: String, fingerprint: String, build: String = "100") -> Diagnostic {
        let frames = [
            Frame(
                binaryUUID: "AAAA-1", binaryName: "MyApp", address: 0xFFFF_0000_0000_1234,
                offsetIntoBinaryTextSegment: 0x1234, sampleCount: 1),
            Frame(
                binaryUUID: "BBBB-2", binaryName: "UIKitCore", address: 7_000, offsetIntoBinaryTextSegment: 700,
                sampleCount: 1),
        ]
        let tree = CallStackTree(
            callStackPerThread: true,
            callStacks: [
                CallStack(threadAttributed: false, frames: [FlatFrame(depth: 0, frame: frames[1])]),
                CallStack(
                    threadAttributed: true,
                    frames: [FlatFrame(depth: 0, frame: frames[0]), FlatFrame(depth: 1, frame: frames[1])]),
            ])
        return Diagnostic(
            kind: .crash, version: "1.0.0",
            meta: DeviceMeta(
                appVersion: version, appBuildVersion: build, osVersion: "iPhone OS 17.4 (21E219)",
                deviceType: "iPhone15,2", regionFormat: "US", platformArchitecture: "arm64e"),
            exceptionType: 1, exceptionCode: 0, signal: 11, terminationReason: "Namespace SIGNAL, Code 11",
            virtualMemoryRegionInfo: "0 is not in any region.",
            exceptionReason: ExceptionReason(
                composedMessage: "boom", className: "NSException", exceptionName: "NSGenericException"),
            callStackTree: tree,
            signature: CrashSignature(
                fingerprint: fingerprint, groupKind: "crash", title: "EXC_BAD_ACCESS / SIGSEGV at MyApp +0x1234",
                frames: [frames[0]]))
    }

    static func hang(version: String) -> Diagnostic {
        Diagnostic(
            kind: .hang, version: "1.0.0", meta: DeviceMeta(appVersion: version),
            primaryMeasurement: measurement(20_000, .milliseconds, "20 sec"),
            signature: CrashSignature(fingerprint: "hang0000000000001", groupKind: "hang", title: "hang", frames: []))
    }

    static func diagnosticPayload(_ diagnostics: [Diagnostic], begin: Int64? = 1_571_641_200) -> DiagnosticPayload {
        DiagnosticPayload(
            begin: begin.map { Timestamp(epochSeconds: $0, raw: "2019-10-21 07:00:00 +0000") },
            end: begin.map { Timestamp(epochSeconds: $0, raw: "2019-10-21 07:00:00 +0000") },
            diagnostics: diagnostics)
    }

    static func item(
        _ content: DocumentContent, hashSeed: String, app: String = app, raw: [UInt8]? = nil,
        receivedAt: Int64 = 1_700_000_000_000,
        unparsed: Int = 0
    ) -> IngestItem {
        IngestItem(
            app: app, document: DecodedDocument(content: content, byteRange: 0..<10, unparsedMeasurements: unparsed),
            contentHash: sha256(hashSeed), raw: raw ?? Array("gz:\(hashSeed)".utf8), receivedAt: receivedAt)
    }

    /// A payload shaped like `shared/bench/make_payloads.py`'s reference document.
    static func referenceMetric<G: RandomNumberGenerator>(_ i: Int, using rng: inout G) -> MetricPayload {
        func hist(_ n: Int, start: Double = 0, unit: MeasurementUnit = .milliseconds) -> Histogram {
            var s = start
            var buckets: [HistogramBucket] = []
            for _ in 0..<n {
                let w = [10.0, 20, 50, 100].randomElement(using: &rng)!
                buckets.append(HistogramBucket(start: s, end: s + w, count: Int64.random(in: 1...5000, using: &rng)))
                s += w
            }
            return Histogram(unit: unit, buckets: buckets)
        }
        let fg = [
            "NormalApp", "MemoryResourceLimit", "BadAccess", "Abnormal", "IllegalInstruction", "AppWatchdog",
            "CPUResourceLimit",
        ]
        let bg = [
            "NormalApp", "MemoryResourceLimit", "CPUResourceLimit", "MemoryPressure", "BadAccess", "Abnormal",
            "IllegalInstruction", "AppWatchdog", "SuspendedWithLockedFile", "BackgroundTaskAssertionTimeout",
            "BackgroundURLSessionCompletionTimeout", "BackgroundFetchCompletionTimeout",
        ]
        var exits = fg.map { ExitCount(state: .foreground, reason: $0, count: Int64.random(in: 0...9, using: &rng)) }
        exits += bg.map { ExitCount(state: .background, reason: $0, count: Int64.random(in: 0...20, using: &rng)) }
        let entered = Int64.random(in: 0...30, using: &rng)
        var signposts = [
            SignpostMetric(
                category: "ExpirationHandlers", name: "DatabaseExpirationHandlerEntered", totalCount: entered),
            SignpostMetric(
                category: "ExpirationHandlers", name: "DatabaseExpirationHandlerExited", totalCount: max(0, entered - 1)
            ),
            SignpostMetric(
                category: "StateRestoration", name: "RestoreAttempt", totalCount: Int64.random(in: 1...60, using: &rng),
                durations: hist(5),
                cumulativeCPUTime: measurement(Double(Int.random(in: 1...9999, using: &rng)), .milliseconds, "x ms"),
                averageMemory: measurement(Double(Int.random(in: 1...99999, using: &rng) * 1024), .bytes, "x kB"),
                cumulativeLogicalWrites: measurement(
                    Double(Int.random(in: 1...9999, using: &rng) * 1024), .bytes, "x kB")),
            SignpostMetric(category: "StateRestoration", name: "RestoreFailed", totalCount: 0),
        ]
        for j in 0..<4 {
            signposts.append(
                SignpostMetric(
                    category: "Feature\(j % 3)", name: "Work\(j)", totalCount: Int64.random(in: 1...999, using: &rng),
                    durations: hist(5),
                    cumulativeCPUTime: measurement(Double(Int.random(in: 1...9999, using: &rng)), .milliseconds, "x ms")
                ))
        }
        let histograms = [
            NamedHistogram(
                name: "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey", histogram: hist(14, start: 200)),
            NamedHistogram(name: "applicationLaunchMetrics.histogrammedResumeTime", histogram: hist(10)),
            NamedHistogram(
                name: "applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey", histogram: hist(8, start: 150)
            ),
            NamedHistogram(name: "applicationLaunchMetrics.histogrammedExtendedLaunch", histogram: hist(6, start: 300)),
            NamedHistogram(
                name: "applicationResponsivenessMetrics.histogrammedAppHangTime", histogram: hist(16, start: 250)),
            NamedHistogram(name: "cellularConditionMetrics.cellConditionTime", histogram: hist(4, unit: .bars)),
        ]
        func scalar(_ name: String, _ range: ClosedRange<Int>, _ factor: Double, _ unit: MeasurementUnit)
            -> ScalarMetric
        {
            ScalarMetric(
                name: name, measurement: measurement(Double(Int.random(in: range, using: &rng)) * factor, unit, "raw"))
        }
        let scalars = [
            scalar("applicationTimeMetrics.cumulativeForegroundTime", 0...20000, 1000, .milliseconds),
            scalar("applicationTimeMetrics.cumulativeBackgroundTime", 0...40000, 1000, .milliseconds),
            scalar("applicationTimeMetrics.cumulativeBackgroundAudioTime", 0...0, 1000, .milliseconds),
            scalar("applicationTimeMetrics.cumulativeBackgroundLocationTime", 0...0, 1000, .milliseconds),
            scalar("cpuMetrics.cumulativeCPUTime", 10...99999, 1000, .milliseconds),
            scalar("cpuMetrics.cumulativeCPUInstructions", 1_000_000...1_000_000_000, 1000, .instructions),
            scalar("gpuMetrics.cumulativeGPUTime", 1...9999, 1000, .milliseconds),
            scalar("memoryMetrics.peakMemoryUsage", 10_000...1_000_000, 1024, .bytes),
            ScalarMetric(
                name: "memoryMetrics.averageSuspendedMemory",
                measurement: measurement(Double(Int.random(in: 1000...99999, using: &rng)) * 1024, .bytes, "raw"),
                standardDeviation: (Double.random(in: 0...5000, using: &rng) * 1000).rounded() / 1000,
                sampleCount: Int64.random(in: 1...900, using: &rng)),
            scalar("diskIOMetrics.cumulativeLogicalWrites", 10...1_000_000, 1024, .bytes),
            scalar("networkTransferMetrics.cumulativeCellularDownload", 0...1_000_000, 1024, .bytes),
            scalar("networkTransferMetrics.cumulativeWifiDownload", 0...1_000_000, 1024, .bytes),
            scalar("networkTransferMetrics.cumulativeCellularUpload", 0...1_000_000, 1024, .bytes),
            scalar("networkTransferMetrics.cumulativeWifiUpload", 0...1_000_000, 1024, .bytes),
            ScalarMetric(
                name: "displayMetrics.averagePixelLuminance",
                measurement: measurement(Double(Int.random(in: 1...99, using: &rng)), .apl, "raw"),
                standardDeviation: 0,
                sampleCount: Int64.random(in: 1...500, using: &rng)),
            scalar("animationMetrics.scrollHitchTimeRatio", 0...20, 1, .millisecondsPerSecond),
        ]
        let day = Int64(1 + i % 28)
        let begin = Int64(1_790_812_800) + (day - 1) * 86_400  // 2026-10-01
        return MetricPayload(
            begin: Timestamp(epochSeconds: begin, raw: "b"), end: Timestamp(epochSeconds: begin + 86_340, raw: "e"),
            meta: DeviceMeta(
                appVersion: "4.\(Int.random(in: 0...6, using: &rng)).\(Int.random(in: 0...3, using: &rng))",
                appBuildVersion: String(Int.random(in: 1000...9999, using: &rng)),
                osVersion:
                    "iPhone OS 17.\(Int.random(in: 0...6, using: &rng)) (21E\(Int.random(in: 100...999, using: &rng)))",
                deviceType: "iPhone15,\(Int.random(in: 1...5, using: &rng))",
                regionFormat: ["US", "GB", "DE", "JP"].randomElement(using: &rng)!,
                platformArchitecture: "arm64e", bundleIdentifier: app),
            exits: exits, signposts: signposts, histograms: histograms, scalars: scalars)
    }
}

/// A deterministic generator for reproducible fixtures (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
