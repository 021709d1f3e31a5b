import Crypto
import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineSimulator
import LifelineStore
import LifelineTestSupport
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL store against a real server (``PostgresServer``): the same documents give the
/// same answers as the SQLite store, concurrent nodes store a document once, rollups stay exact
/// under concurrent writers, one leader at a time.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    static let app = "com.example.notes"
    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The documents of a simulated fleet (both formats, crashes, hangs, handlers), as ingest items.
    static func items(devices: Int, days: Int, seed: UInt64 = 7) throws -> [IngestItem] {
        var config = SimulationConfig(
            bundleIdentifier: app, days: days, startDay: SimulationConfig.day(from: "2026-10-01"))
        config.devices = devices
        config.seed = seed
        let simulation = try Simulation(config)
        return try (0..<simulation.deviceDayCount).flatMap { simulation.deviceDay(at: $0).payloads }.map { payload in
            let family: DocumentFamily = payload.kind == .metric ? .metric : .diagnostic
            let documents = try MetricKitDecoder.decode(payload.json, family: family)
            return IngestItem(
                app: app, document: documents[0], contentHash: Array(SHA256.hash(data: payload.json)),
                raw: payload.json,
                receivedAt: 1_790_000_000_000)
        }
    }

    /// A migrated store on a new database of the test server; nil when there is no server.
    static func store() async throws -> PostgresStore? {
        guard let server = PostgresServer.running() else { return nil }
        let store = try PostgresStore(url: try server.createDatabase(), logger: quiet)
        try await store.migrate()
        return store
    }

    /// Every figure the API, report and alerts read, for comparing two stores.
    struct Figures: Equatable, Sendable {
        var apps: [AppInfo]
        var exitsByVersion: [ExitFigure]
        var exitsByDeviceAndOS: [ExitFigure]
        var exitsByDay: [ExitFigure]
        var handlers: [HandlerFigure]
        var restoration: [RestorationFigure]
        var restorationByDay: [RestorationFigure]
        var percentiles: [[PercentileFigure]]
        var filteredPercentiles: [PercentileFigure]
        var usage: [UsageRow]
        var signposts: [SignpostRow]
        var crashes: [String]
        var summary: SummaryFigure
        /// iOS 27 app states: per-state exits, hangs, usage, signposts and diagnostics, and a state filter.
        var exitsByAppState: [ExitFigure]
        var hangsByAppState: [PercentileFigure]
        var usageByAppState: [UsageRow]
        var signpostsByAppState: [SignpostRow]
        var diagnosticsByAppState: [String]
        var exitsInOneState: [ExitFigure]

        static func read(_ source: any AggregateSource) async throws -> Figures {
            try await AnalysisRunner(source: source).analyze { analyzer in
                let scope = Scope(
                    app: app, days: DayRange(from: "2026-09-25", to: "2026-10-20"))
                let sources = Analyzer.launchHistograms.map(\.source) + [Analyzer.hangHistogram]
                let os = try analyzer.reader.usage(scope.grouped(by: [.os])).compactMap(\.key.os).sorted().first ?? ""
                var filtered = scope.grouped(by: [.version])
                filtered.oses = [os]
                return Figures(
                    apps: try analyzer.apps(),
                    exitsByVersion: try analyzer.exits(scope.grouped(by: [.version])),
                    exitsByDeviceAndOS: try analyzer.exits(scope.grouped(by: [.device, .os])),
                    exitsByDay: try analyzer.exits(scope.grouped(by: [.day])),
                    handlers: try analyzer.handlers(scope.grouped(by: [.version])),
                    restoration: try analyzer.restoration(scope.grouped(by: [.version])),
                    restorationByDay: try analyzer.restoration(scope.grouped(by: [.day])),
                    percentiles: try sources.map {
                        try analyzer.percentiles(scope.grouped(by: [.version]), source: $0)
                    },
                    filteredPercentiles: try analyzer.percentiles(filtered, source: Analyzer.hangHistogram),
                    usage: try analyzer.usage(scope.grouped(by: [.device])).sorted { $0.key < $1.key },
                    signposts: try analyzer.signposts(scope.grouped(by: [.version])).sorted {
                        ($0.key, $0.category, $0.name) < ($1.key, $1.category, $1.name)
                    },
                    // Group ids are each store's own: compare by fingerprint.
                    crashes: try analyzer.crashes(scope).map { crash in
                        var group = crash.group
                        group.id = 0
                        return
                            "\(group) \(crash.kind) \(crash.count) \(crash.countByVersion.sorted { $0.key < $1.key })"
                            + " \(crash.exceptionName ?? "-") \(crash.signalName ?? "-") \(crash.isWatchdog)"
                    }.sorted(),
                    summary: try analyzer.summary(scope),
                    exitsByAppState: try analyzer.exits(scope.grouped(by: [.appState, .version])),
                    hangsByAppState: try analyzer.percentiles(
                        scope.grouped(by: [.appState]), source: Analyzer.hangHistogram),
                    usageByAppState: try analyzer.reader.usage(scope.grouped(by: [.appState, .day])).sorted {
                        $0.key < $1.key
                    },
                    signpostsByAppState: try analyzer.reader.signposts(
                        scope.grouped(by: [.appState]), categories: []
                    ).sorted { ($0.key, $0.category, $0.name) < ($1.key, $1.category, $1.name) },
                    // Group ids are each store's own: compared by count per kind and key.
                    diagnosticsByAppState: try analyzer.reader.diagnostics(scope.grouped(by: [.appState, .device]))
                        .map { "\($0.key) \($0.kind) \($0.count)" }.sorted(),
                    exitsInOneState: try {
                        let states = try analyzer.reader.usage(scope.grouped(by: [.appState])).compactMap {
                            $0.key.appState.map { "\($0.domain)/\($0.label)" }
                        }.sorted()
                        var one = scope.grouped(by: [.version])
                        one.appStates = Array(states.prefix(1))
                        return try analyzer.exits(one)
                    }())
            }
        }
    }

    @Test("the same documents give the same figures on SQLite and PostgreSQL")
    func sameAnswersAsSQLite() async throws {
        guard let store = try await Self.store() else { return }
        let items = try Self.items(devices: 60, days: 4)
        let sqlite = try TemporaryDatabase()
        try await IngestWriter.withWriter(database: sqlite.database, logger: Self.quiet) { writer in
            for chunk in stride(from: 0, to: items.count, by: 7) {
                _ = try await writer.submit(
                    IngestRequest(app: Self.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
            }
        }
        for chunk in stride(from: 0, to: items.count, by: 7) {
            let outcome = try await store.write(
                IngestRequest(app: Self.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
            #expect(outcome.accepted == min(7, items.count - chunk))
        }
        let expected = try await Figures.read(sqlite.database)
        let actual = try await Figures.read(store)
        #expect(expected.apps.first?.metricPayloads ?? 0 > 100)
        #expect(!expected.crashes.isEmpty)
        #expect(!expected.handlers.isEmpty)
        #expect(actual.apps == expected.apps)
        #expect(actual.exitsByVersion == expected.exitsByVersion)
        #expect(actual.exitsByDeviceAndOS == expected.exitsByDeviceAndOS)
        #expect(actual.exitsByDay == expected.exitsByDay)
        #expect(actual.handlers == expected.handlers)
        #expect(actual.restoration == expected.restoration)
        #expect(actual.restorationByDay == expected.restorationByDay)
        #expect(actual.percentiles == expected.percentiles)
        #expect(actual.filteredPercentiles == expected.filteredPercentiles)
        #expect(actual.usage == expected.usage)
        #expect(actual.signposts == expected.signposts)
        #expect(actual.crashes == expected.crashes)
        #expect(actual.summary == expected.summary)
        #expect(!expected.exitsByAppState.isEmpty)
        #expect(!expected.usageByAppState.isEmpty)
        #expect(!expected.exitsInOneState.isEmpty)
        #expect(actual.exitsByAppState == expected.exitsByAppState)
        #expect(actual.hangsByAppState == expected.hangsByAppState)
        #expect(actual.usageByAppState == expected.usageByAppState)
        #expect(actual.signpostsByAppState == expected.signpostsByAppState)
        #expect(actual.diagnosticsByAppState == expected.diagnosticsByAppState)
        #expect(actual.exitsInOneState == expected.exitsInOneState)
        await store.shutdown()
    }

    @Test("two nodes posting the same documents at once store each once, rollups exact, replays answered alike")
    func concurrentNodesStoreOnce() async throws {
        guard let first = try await Self.store() else { return }
        let second = try PostgresStore(location: first.location, logger: Self.quiet)
        let items = try Self.items(devices: 30, days: 2, seed: 11)
        // Every document goes to both nodes at the same time, in requests of 3, from 8 clients each.
        let outcomes = try await withThrowingTaskGroup(of: IngestOutcome.self) { group in
            for chunk in stride(from: 0, to: items.count, by: 3) {
                let request = IngestRequest(app: Self.app, items: Array(items[chunk..<min(chunk + 3, items.count)]))
                group.addTask { try await first.write(request) }
                group.addTask { try await second.write(request) }
            }
            var all: [IngestOutcome] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.map(\.accepted).reduce(0, +) == items.count)
        #expect(outcomes.map(\.duplicates).reduce(0, +) == items.count)
        // The rollups equal those of one writer alone.
        guard let alone = try await Self.store() else { return }
        _ = try await alone.write(IngestRequest(app: Self.app, items: items))
        let concurrent = try await Figures.read(first)
        let single = try await Figures.read(alone)
        #expect(concurrent == single)
        // An idempotency key replayed on the other node answers the first outcome.
        let extra = try Self.items(devices: 2, days: 1, seed: 99)
        let request = IngestRequest(app: Self.app, items: extra, idempotencyKey: "retry-1")
        let original = try await first.write(request)
        let replay = try await second.write(request)
        #expect(original.accepted == extra.count)
        #expect(replay.replayed)
        #expect(replay.ids == original.ids)
        await first.shutdown()
        await second.shutdown()
        await alone.shutdown()
    }

    @Test("migrations apply once, and a changed migration is refused")
    func migrations() async throws {
        guard let store = try await Self.store() else { return }
        #expect(try await store.migrate().isEmpty)
        #expect(try await store.appliedMigrations() == EmbeddedPostgresMigrations.all.map(\.version))
        var edited = EmbeddedPostgresMigrations.all
        edited[0].sql += "\n-- edited\n"
        await #expect(throws: PostgresStoreError.self) { try await store.migrate(edited) }
        await store.shutdown()
    }

    @Test("raw documents of recent days get a day partition, dropped whole by retention; old data pruned by day")
    func dayPartitions() async throws {
        guard let store = try await Self.store() else { return }
        let now = Int64(Date().timeIntervalSince1970)
        let today = UTCDay(epochSeconds: now)
        var items = try Self.items(devices: 3, days: 1, seed: 5).filter {
            if case .metric = $0.document.content { return true }
            return false
        }
        // Shift the documents to today and to a day long ago (which goes to the default partition).
        for index in items.indices {
            guard case .metric(var metric) = items[index].document.content else { continue }
            let seconds = index == 0 ? now - 400 * 86_400 : now - 60
            metric.begin = Timestamp(epochSeconds: seconds, raw: "x")
            items[index].document.content = .metric(metric)
        }
        _ = try await store.write(IngestRequest(app: Self.app, items: items))
        #expect(try await store.rawPartitions() == [today.string])
        // Raw documents kept one day, seen from tomorrow: today's partition goes whole, the old
        // document leaves the default partition; payloads and figures stay.
        var rawOnly = RetentionPolicy.keepForever
        rawOnly.rawDays = 1
        let rawReport = try await store.prune(policy: rawOnly, now: now + 86_400)
        #expect(rawReport.rawDocuments == items.count)
        #expect(rawReport.payloads == 0)
        #expect(try await store.rawPartitions().isEmpty)
        // Data kept 30 days: the payload of 400 days ago goes with its rollup rows; a dry run
        // counts the same without removing anything.
        var dataOnly = RetentionPolicy.keepForever
        dataOnly.dataDays = 30
        let counted = try await store.prune(policy: dataOnly, now: now, dryRun: true)
        #expect(counted.payloads == 1)
        #expect(counted.rollupRows > 0)
        let pruned = try await store.prune(policy: dataOnly, now: now)
        #expect(pruned.payloads == 1)
        #expect(pruned.rollupRows == counted.rollupRows)
        let apps = try await AnalysisRunner(source: store).analyze { try $0.apps() }
        #expect(apps.first?.metricPayloads == Int64(items.count - 1))
        #expect(try await store.prune(policy: dataOnly, now: now).payloads == 0)
        await store.shutdown()
    }

    @Test("one leader among two nodes; the other takes over within seconds when the leader's connection dies")
    func leaderElection() async throws {
        guard let store = try await Self.store() else { return }
        let location = store.location
        let a = try LeaderElection(location: location, retry: .milliseconds(200), logger: Self.quiet)
        let b = try LeaderElection(location: location, retry: .milliseconds(200), logger: Self.quiet)
        let taskA = Task { await a.run() }
        let taskB = Task { await b.run() }
        func waitFor(_ condition: () -> Bool) async throws -> Duration {
            let clock = ContinuousClock()
            let start = clock.now
            while !condition() {
                guard clock.now - start < .seconds(10) else { throw TestFailure("timed out") }
                try await Task.sleep(for: .milliseconds(20))
            }
            return clock.now - start
        }
        _ = try await waitFor { a.isLeader || b.isLeader }
        try await Task.sleep(for: .milliseconds(600))
        #expect(a.isLeader != b.isLeader, "exactly one leader")
        let (leader, follower, leaderTask) = a.isLeader ? (a, b, taskA) : (b, a, taskB)
        // The leader's process dies: its connection goes, and with it the lock.
        leaderTask.cancel()
        let takeover = try await waitFor { follower.isLeader }
        #expect(takeover < .seconds(5))
        #expect(!leader.isLeader)
        taskA.cancel()
        taskB.cancel()
        await taskA.value
        await taskB.value
        await store.shutdown()
    }
}
