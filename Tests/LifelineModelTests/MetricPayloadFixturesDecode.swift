import LifelineModel
import Testing

@Suite("Metric payload fixtures decode to their values")
struct MetricPayloadFixturesDecode {
    let full: MetricPayload
    let sparse: MetricPayload

    init() throws {
        full = try Fixtures.metric("metrics/lifeline-authored__ios17-full.json")
        sparse = try Fixtures.metric("metrics/lifeline-authored__sparse-zoneless.json")
    }

    @Test("metadata and the top-level appVersion are read")
    func metadataIsRead() {
        #expect(full.meta.appVersion == "4.2.0")
        #expect(full.meta.appBuildVersion == "420")
        #expect(full.meta.osVersion == "iPhone OS 17.4 (21E219)")
        #expect(full.meta.deviceType == "iPhone15,2")
        #expect(full.meta.regionFormat == "US")
        #expect(full.meta.platformArchitecture == "arm64e")
        #expect(full.meta.bundleIdentifier == "com.example.notes")
        #expect(full.meta.isTestFlightApp == false)
        #expect(full.meta.lowPowerModeEnabled == false)
        #expect(full.meta.pid == nil)
        #expect(sparse.meta.appVersion == "4.1.3")
        #expect(sparse.meta.bundleIdentifier == nil)
    }

    @Test("timestamps with and without a zone become epoch seconds")
    func timestampsAreParsed() {
        #expect(full.begin == Timestamp(epochSeconds: 1_793_491_200, raw: "2026-11-01 00:00:00 +0000"))
        #expect(full.end?.epochSeconds == Int64(1_793_577_540))
        #expect(sparse.begin == Timestamp(epochSeconds: 1_793_318_400, raw: "2026-10-30 00:00:00"))
        #expect(sparse.end?.epochSeconds == Int64(1_793_404_740))
    }

    @Test("exit counters of both states are read, zero counters kept")
    func exitCountsAreRead() {
        #expect(full.exits.count == 19)
        #expect(full.exitCount(.background, "MemoryPressure") == 7)
        #expect(full.exitCount(.background, "BackgroundTaskAssertionTimeout") == 2)
        #expect(full.exitCount(.background, "SuspendedWithLockedFile") == 1)
        #expect(full.exitCount(.background, "BackgroundFetchCompletionTimeout") == 1)
        #expect(full.exitCount(.background, "AppWatchdog") == 0)
        #expect(full.exitCount(.foreground, "NormalApp") == 12)
        #expect(full.exitCount(.foreground, "AppWatchdog") == 1)
        #expect(full.exitCount(.foreground, "MemoryPressure") == nil)
        #expect(sparse.exits == [ExitCount(state: .background, reason: "MemoryPressure", count: 13)])
    }

    @Test("signposts keep counts and interval data")
    func signpostsAreRead() throws {
        #expect(full.signposts.count == 4)
        #expect(full.signposts[0].category == "ExpirationHandlers")
        #expect(full.signposts[0].name == "DatabaseExpirationHandlerEntered")
        #expect(full.signposts[0].totalCount == 9)
        #expect(full.signposts[0].durations == nil)
        let restore = try #require(full.signposts.first { $0.name == "RestoreAttempt" })
        #expect(restore.totalCount == 31)
        #expect(restore.cumulativeCPUTime?.value == 1240)
        #expect(restore.cumulativeCPUTime?.unit == .milliseconds)
        #expect(restore.averageMemory?.value == 48_000_000)
        #expect(restore.averageMemory?.unit == .bytes)
        #expect(restore.cumulativeLogicalWrites?.value == 320_000)
        let durations = try #require(restore.durations)
        #expect(durations.unit == .milliseconds)
        #expect(durations.buckets.map(\.start) == [0, 51, 201])
        #expect(durations.buckets.map(\.end) == [50, 200, 1000])
        #expect(durations.buckets.map(\.count) == [20, 9, 2])
        #expect(sparse.signposts.isEmpty)
    }

    @Test("histograms are named section.key with canonical bucket bounds")
    func histogramsAreRead() throws {
        #expect(full.histograms.count == 3)
        let launch = try #require(full.histogram("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"))
        #expect(
            launch.buckets == [
                HistogramBucket(start: 300, end: 400, count: 14), HistogramBucket(start: 400, end: 800, count: 5),
                HistogramBucket(start: 800, end: 2000, count: 1),
            ])
        #expect(launch.totalCount == 20)
        let hangs = try #require(full.histogram("applicationResponsivenessMetrics.histogrammedAppHangTime"))
        #expect(hangs.buckets.last == HistogramBucket(start: 1000, end: 2000, count: 1))
        #expect(full.histogram("applicationLaunchMetrics.histogrammedResumeTime")?.totalCount == 40)
    }

    @Test("scalars and averages are converted into canonical units")
    func scalarsAreRead() throws {
        #expect(full.scalar("memoryMetrics.peakMemoryUsage")?.measurement.value == 210_000_000)
        #expect(full.scalar("memoryMetrics.peakMemoryUsage")?.measurement.raw == "210,000 kB")
        #expect(full.scalar("applicationTimeMetrics.cumulativeForegroundTime")?.measurement.value == 2_700_000)
        #expect(full.scalar("cpuMetrics.cumulativeCPUTime")?.measurement.value == 310_000)
        let instructions = try #require(full.scalar("cpuMetrics.cumulativeCPUInstructions")?.measurement)
        #expect(instructions.value == 1_200_000_000)
        #expect(instructions.unit == .instructions)
        let hitches = try #require(full.scalar("animationMetrics.scrollHitchTimeRatio")?.measurement)
        #expect(hitches.value == 3)
        #expect(hitches.unit == .millisecondsPerSecond)
        let average = try #require(full.scalar("memoryMetrics.averageSuspendedMemory"))
        #expect(average.measurement.value == 42_000_000)
        #expect(average.standardDeviation == 1_200_500)  // 1200.5 kB, in bytes like the average
        #expect(average.sampleCount == 38)
    }

    @Test("a no-data average keeps sampleCount 0 and drops the -1 deviation")
    func noDataAverage() throws {
        let average = try #require(sparse.scalar("memoryMetrics.averageSuspendedMemory"))
        #expect(average.measurement.value == 0)
        #expect(average.sampleCount == 0)
        #expect(average.standardDeviation == nil)
        #expect(sparse.scalar("memoryMetrics.peakMemoryUsage")?.measurement.value == 98_000_000)
    }
}
