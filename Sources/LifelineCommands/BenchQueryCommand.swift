import ArgumentParser
import Foundation
import LifelineIngest
import LifelineAnalysis
import LifelineModel
import LifelinePostgres
import LifelineServer
import LifelineSimulator
import LifelineSQLite
import Logging
import NIOCore

/// `lifeline bench query`: aggregate query latency over a large database.
struct BenchQueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fill a database with distinct metric payloads through the real ingest path, then time queries.",
        discussion: """
            Generates --payloads distinct metric payloads over --days days (7 versions × 7 OS versions × \
            5 device types, English measurement strings; exits, app time, a launch histogram, peak memory, \
            logical writes, CPU time, a scroll hitch ratio and signposts), ingests them through the same pipeline and \
            group-commit writer as the server (skipped when --db already holds them), then runs each \
            query --runs times and prints the median and p95 latency in ms.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Distinct metric payloads to store.")
    var payloads = 1_000_000

    @Option(help: "Days they span (ending 2026-10-31).")
    var days = 30

    @Option(help: "Runs per query.")
    var runs = 21

    @Option(help: "Bundle identifier of the generated payloads.")
    var app = "com.example.bench"

    @Option(help: "Only the queries whose name contains this text (e.g. \"by os and device\"), for profiling one.")
    var only: String?

    func run() async throws {
        if global.isPostgres {
            try await global.withPostgres { store in
                // This process folds what it appends, as a leader would, while it fills.
                let folding = Task { await store.runAggregator(isLeader: { true }) }
                defer { folding.cancel() }
                try await store.foldAll()
                try await bench(source: store) { start in
                    try await fill(store, from: start)
                    try await store.foldAll()
                }
            }
            return
        }
        let database = try Database(path: global.db)
        defer { database.checkpointForExit() }
        try database.migrate()
        try await bench(source: database) { start in
            let writer = try IngestWriter(database: database, logger: global.makeLogger())
            do {
                try await fill(writer, from: start)
            } catch {
                await writer.shutdown()
                throw error
            }
            await writer.shutdown()
        }
    }

    /// Metric payloads of the app stored in `source`.
    private func stored(_ source: any AggregateSource) async throws -> Int {
        let app = self.app
        let apps = try await AnalysisRunner(source: source).analyze { try await $0.apps() }
        return Int(apps.first { $0.bundleID == app }?.metricPayloads ?? 0)
    }

    /// Fills `source` up to `--payloads` (with `fill`, from the count stored), then times the queries.
    private func bench(
        source: any AggregateSource, fill: (Int) async throws -> Void
    ) async throws {
        let existing = try await stored(source)
        if existing < payloads {
            try await fill(existing)
        } else {
            printError("\(global.dbDescription) already holds \(existing) payloads of \(app); querying")
        }
        let analysis = AnalysisRunner(source: source)
        let window = DayRange(last: SyntheticPayload.lastDay, count: days)
        let scope = Scope(app: app, days: window)
        let app = self.app
        // Each run is one read transaction on the store's reader threads, as a request is.
        let queries: [(String, @Sendable (Analyzer) async throws -> Int)] = [
            (
                "exits by version, \(days) days",
                { analyzer in try await analyzer.exits(scope.grouped(by: [.version])).count }
            ),
            (
                "exits by version and day",
                { analyzer in try await analyzer.exits(scope.grouped(by: [.version, .day])).count }
            ),
            (
                "exits by os and device",
                { analyzer in try await analyzer.exits(scope.grouped(by: [.os, .device])).count }
            ),
            (
                "expiration handlers by version",
                { analyzer in try await analyzer.handlers(scope.grouped(by: [.version])).count }
            ),
            (
                "restoration by version",
                { analyzer in try await analyzer.restoration(scope.grouped(by: [.version])).count }
            ),
            (
                "launch p50..p99 by version",
                { analyzer in
                    try await analyzer.percentiles(
                        scope.grouped(by: [.version]), source: Analyzer.launchHistograms[0].source
                    ).count
                }
            ),
            (
                "launch p50..p99 by os and device",
                { analyzer in
                    try await analyzer.percentiles(
                        scope.grouped(by: [.os, .device]), source: Analyzer.launchHistograms[0].source
                    ).count
                }
            ),
            (
                "exits, one version filtered",
                { analyzer in try await analyzer.exits(Scope(app: app, days: window, versions: ["4.3.0"])).count }
            ),
            (
                "explorer, every category by version",
                { analyzer in try await analyzer.explorer(scope.grouped(by: [.version])).count }
            ),
            (
                "explorer memory by os and device",
                { analyzer in try await analyzer.explorer(scope.grouped(by: [.os, .device]), category: .memory).count }
            ),
            (
                "insights, every metric",
                { analyzer in try await analyzer.insights(scope).entries.count }
            ),
        ]
        print(
            "query (over \(try await stored(source)) payloads)      median ms   p95 ms   rows"
        )
        for (name, query) in queries where only.map({ name.contains($0) }) ?? true {
            var samples: [Double] = []
            var rows = 0
            for _ in 0..<runs {
                let started = ContinuousClock.now
                rows = try await analysis.analyze(query)
                let elapsed = started.duration(to: .now)
                samples.append(
                    Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            samples.sort()
            let median = samples[samples.count / 2]
            let p95 = samples[min(samples.count - 1, Int(Double(samples.count) * 0.95))]
            print(
                name.padding(toLength: 40, withPad: " ", startingAt: 0)
                    + String(format: "%9.2f %8.2f %6d", median, p95, rows))
        }
    }

    /// Ingests generated payloads `start..<payloads` through the pipeline and `writer` (the
    /// SQLite group-commit writer, or a PostgreSQL store, which groups requests into transactions too).
    func fill(_ writer: any DocumentWriter, from start: Int) async throws {
        let pipeline = IngestPipeline()
        let progress = Progress(total: payloads - start, label: "generate+ingest")
        let app = self.app
        let days = self.days
        let started = ContinuousClock.now
        let lanes = 64
        let chunk = 50
        var next = start
        let total = payloads
        try await withThrowingTaskGroup(of: Int.self) { group in
            func launch() {
                guard next < total else { return }
                let range = next..<min(total, next + chunk)
                next = range.upperBound
                group.addTask {
                    var items: [IngestItem] = []
                    for index in range {
                        let body = ByteBuffer(string: SyntheticPayload.json(index: index, app: app, days: days))
                        items += try pipeline.prepare(
                            body: body, encoding: .identity, family: .metric, app: app, receivedAt: 0)
                    }
                    _ = try await writer.write(IngestRequest(app: app, items: items, idempotencyKey: nil))
                    return range.count
                }
            }
            for _ in 0..<lanes { launch() }
            while let done = try await group.next() {
                progress.advance(by: done)
                launch()
            }
        }
        progress.finish()
        let seconds = started.duration(to: .now)
        printError("ingested \(payloads - start) payloads in \(seconds)")
    }
}

/// Deterministic synthetic metric payloads for the query benchmark.
enum SyntheticPayload {
    static let versions = ["4.0.0", "4.0.1", "4.1.0", "4.1.1", "4.2.0", "4.2.1", "4.3.0"]
    static let oses = (0..<7).map { "iPhone OS 17.\($0) (21E\(200 + $0))" }
    /// 2026-10-31, the last day of the synthetic data.
    static let lastDay = UTCDay(epochSeconds: 20_757 * 86_400)

    static let devices = ["iPhone14,5", "iPhone14,7", "iPhone15,2", "iPhone15,3", "iPhone16,1"]

    static func json(index: Int, app: String, days: Int) -> String {
        var rng = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let day = lastDay.advanced(by: -(index % days)).string
        let version = versions[Int(rng.next() % UInt64(versions.count))]
        let os = oses[Int(rng.next() % UInt64(oses.count))]
        let device = devices[Int(rng.next() % UInt64(devices.count))]
        func r(_ n: UInt64) -> UInt64 { rng.next() % n }
        let entered = r(20)
        let exited = entered - min(entered, r(3) == 0 ? 1 : 0)
        return """
            {"appVersion":"\(version)","timeStampBegin":"\(day) 00:00:00 +0000","timeStampEnd":"\(day) 23:59:00 +0000",
            "metaData":{"appBuildVersion":"\(index)","osVersion":"\(os)","deviceType":"\(device)","regionFormat":"US",
            "platformArchitecture":"arm64e","bundleIdentifier":"\(app)"},
            "applicationExitMetrics":{"foregroundExitData":{"cumulativeNormalAppExitCount":\(r(9)),
            "cumulativeMemoryResourceLimitExitCount":\(r(2)),"cumulativeBadAccessExitCount":\(r(2)),
            "cumulativeAppWatchdogExitCount":\(r(2))},"backgroundExitData":{"cumulativeMemoryPressureExitCount":\(r(20)),
            "cumulativeBackgroundTaskAssertionTimeoutExitCount":\(r(3)),"cumulativeNormalAppExitCount":\(r(9)),
            "cumulativeSuspendedWithLockedFileExitCount":\(r(2))}},
            "applicationTimeMetrics":{"cumulativeForegroundTime":"\(r(20000)) sec","cumulativeBackgroundTime":"\(r(40000)) sec"},
            "memoryMetrics":{"peakMemoryUsage":"\(200_000 + r(300_000)) kB"},
            "diskIOMetrics":{"cumulativeLogicalWrites":"\(r(500_000)) kB"},
            "cpuMetrics":{"cumulativeCPUTime":"\(r(600)) sec"},
            "animationMetrics":{"scrollHitchTimeRatio":"\(r(20)) ms per s"},
            "applicationLaunchMetrics":{"histogrammedTimeToFirstDrawKey":{"histogramNumBuckets":3,"histogramValue":{
            "0":{"bucketCount":\(r(50) + 1),"bucketStart":"200 ms","bucketEnd":"400 ms"},
            "1":{"bucketCount":\(r(20)),"bucketStart":"400 ms","bucketEnd":"800 ms"},
            "2":{"bucketCount":\(r(5)),"bucketStart":"800 ms","bucketEnd":"2,000 ms"}}}},
            "signpostMetrics":[
            {"signpostCategory":"ExpirationHandlers","signpostName":"SyncExpirationHandlerEntered","totalSignpostCount":\(entered)},
            {"signpostCategory":"ExpirationHandlers","signpostName":"SyncExpirationHandlerExited","totalSignpostCount":\(exited)},
            {"signpostCategory":"StateRestoration","signpostName":"RestoreAttempt","totalSignpostCount":\(r(40) + 1),
            "signpostIntervalData":{"histogrammedSignpostDurations":{"histogramNumBuckets":2,"histogramValue":{
            "0":{"bucketCount":\(r(30) + 1),"bucketStart":"0 ms","bucketEnd":"100 ms"},
            "1":{"bucketCount":\(r(5)),"bucketStart":"100 ms","bucketEnd":"500 ms"}}}}},
            {"signpostCategory":"StateRestoration","signpostName":"RestoreFailed","totalSignpostCount":\(r(100) == 0 ? 1 : 0)}]}
            """
    }
}
