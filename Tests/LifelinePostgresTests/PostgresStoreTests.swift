import Crypto
import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineSimulator
import LifelineSQLite
import LifelineStorage
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
        // The explorer: every metric of both formats, by version, device × OS, app state.
        #expect(expected.explorer.count > 200)
        #expect(expected.explorer.contains { $0.hasPrefix("launch.time_to_first_draw ") })
        #expect(expected.explorer.contains { $0.hasPrefix("memory.peak ") })
        #expect(!expected.insights.isEmpty)
        #expect(
            actual.explorer == expected.explorer,
            "\(zip(actual.explorer, expected.explorer).first { $0 != $1 }.map { "\($0)" } ?? "counts differ")")
        #expect(actual.insights == expected.insights)
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
            var document = items[index].document
            document.content = .metric(metric)
            let item = items[index]
            items[index] = IngestItem(
                app: item.app, document: document, contentHash: item.contentHash, raw: item.raw,
                receivedAt: item.receivedAt)
        }
        _ = try await store.write(IngestRequest(app: Self.app, items: items))
        #expect(try await store.partitions(of: "payload_raw") == [today.string])
        // Raw documents kept one day, seen from tomorrow: today's partition goes whole, the old
        // document leaves the default partition; payloads and figures stay.
        var rawOnly = RetentionPolicy.keepForever
        rawOnly.rawDays = 1
        let rawReport = try await store.prune(policy: rawOnly, now: now + 86_400)
        #expect(rawReport.rawDocuments == items.count)
        #expect(rawReport.payloads == 0)
        #expect(try await store.partitions(of: "payload_raw").isEmpty)
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
        let apps = try await AnalysisRunner(source: store).analyze { try await $0.apps() }
        #expect(apps.first?.metricPayloads == Int64(items.count - 1))
        #expect(try await store.prune(policy: dataOnly, now: now).payloads == 0)
        await store.shutdown()
    }

    @Test("a server error inside the ingest transaction is answered 500 internal, and nothing of the request is kept")
    func serverErrorInsideTransaction() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let store = try PostgresStore(url: url, logger: Self.quiet)
        try await store.migrate()
        let items = try Self.items(devices: 2, days: 1, seed: 9)
        let first = try await store.write(IngestRequest(app: Self.app, items: [items[0]]))
        // The next payload id is one already taken: its INSERT fails with a unique violation.
        try server.execute("SELECT setval('payloads_id_seq', \(first.ids[0]), false)", url: url)
        await #expect {
            _ = try await store.write(IngestRequest(app: Self.app, items: [items[1]]))
        } throws: { error in
            (error as? IngestError)?.kind == .internal
        }
        let stored = try await store.read { try await $0.apps() }.first?.metricPayloads
        #expect(stored == 1)
        await store.shutdown()
    }

    @Test(
        "requests written in one transaction get their own answers (duplicates and replays inside the batch too); a failing batch is written request by request"
    )
    func groupedTransactions() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let store = try PostgresStore(url: url, logger: Self.quiet)
        try await store.migrate()
        let items = try Self.items(devices: 8, days: 1, seed: 11)
        _ = try await store.write(IngestRequest(app: Self.app, items: [items[0]]))
        let batch = [
            WriteJob(IngestRequest(app: Self.app, items: [items[1]])),
            WriteJob(IngestRequest(app: Self.app, items: [items[1], items[2]])),
            WriteJob(IngestRequest(app: Self.app, items: [items[3]], idempotencyKey: "upload-1")),
            WriteJob(IngestRequest(app: Self.app, items: [items[4]], idempotencyKey: "upload-1")),
            WriteJob(IngestRequest(app: "com.example.other", items: [items[5]])),
        ]
        let results = try await store.writeGrouped(batch).map { try $0.get() }
        #expect(results.map(\.accepted) == [1, 1, 1, 0, 1])
        #expect(results.map(\.duplicates) == [0, 1, 0, 1, 0])
        #expect(results[1].ids[0] == results[0].ids[0])
        #expect(results[3].replayed && results[3].ids == results[2].ids)
        // The next payload id is the last one taken: the batch's first insert fails, so the batch
        // rolls back and each request is written on its own (the failed one too, with the next id).
        try server.execute(
            "SELECT setval('payloads_id_seq', (SELECT max(id) FROM payloads), false)", url: url)
        let retried = await store.writeGrouped([
            WriteJob(IngestRequest(app: Self.app, items: [items[6]])),
            WriteJob(IngestRequest(app: Self.app, items: [items[7]])),
        ])
        #expect(retried.allSatisfy { (try? $0.get().accepted) == 1 })
        let apps = try await store.read { try await $0.apps() }
        let stored = apps.map { $0.metricPayloads + $0.diagnosticPayloads }.reduce(0, +)
        #expect(stored == 7)  // items 0, 1, 2, 3, 5 (4 was a replay), 6, 7
        await store.shutdown()
    }

    @Test("migration 0007 moves the diagnostics, frames and states stored before it into the day partitions")
    func diagnosticPartitionMigration() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let store = try PostgresStore(url: url, logger: Self.quiet)
        let before = EmbeddedPostgresMigrations.all.filter { $0.version < 7 }
        try await store.migrate(before)
        // Rows as the writer of schema 6 stored them: no day on diagnostics, frames or states.
        try server.execute(
            """
            INSERT INTO apps (id, bundle_id) VALUES (1, '\(Self.app)');
            INSERT INTO payloads (id, app, kind, app_version, build, os_version, device_type, region, arch, day,
                received_at_ms, content_hash, format, device_day)
            VALUES (1, 1, 'diagnostic', '1.0', '1', 'iPhone OS 17.4 (21E219)', 'iPhone15,2', 'US', 'arm64',
                '2026-10-05', 0, decode(repeat('ab', 32), 'hex'), 'legacy', false);
            INSERT INTO crash_groups (id, app, fingerprint, group_kind, title, first_seen, last_seen, count)
            VALUES (1, 1, 'f', 'crash', 'EXC_BAD_ACCESS / SIGSEGV at Demo +0x4030', 1, 1, 1);
            INSERT INTO diagnostics (id, payload, ordinal, kind, app_version, os_version, device_type, occurred_at,
                signal, crash_group)
            VALUES (7, 1, 0, 'crash', '1.0', 'iPhone OS 17.4 (21E219)', 'iPhone15,2', 1790000000, 11, 1);
            INSERT INTO diagnostic_frames (diagnostic, position, binary_name, binary_uuid, address, "offset")
            VALUES (7, 0, 'Demo', 'AAAAAAAA-0000-0000-0000-000000000000', 4295000112, 16432);
            INSERT INTO app_state_values (id, domain, label) VALUES (1, 'screen', 'Home');
            INSERT INTO diagnostic_states (diagnostic, app_state) VALUES (7, 1);
            INSERT INTO diagnostic_rollup (app, day, version, os, device, kind, crash_group, count)
            VALUES (1, '2026-10-05', '1.0', 'iPhone OS 17.4 (21E219)', 'iPhone15,2', 'crash', 1, 1);
            SELECT setval('apps_id_seq', 1), setval('payloads_id_seq', 1), setval('crash_groups_id_seq', 1),
                setval('diagnostics_id_seq', 7), setval('app_state_values_id_seq', 1)
            """, url: url)
        let applied = try await store.migrate()
        #expect(applied.map(\.version).contains(7))
        let scope = Scope(app: Self.app, days: DayRange(from: "2026-10-01", to: "2026-10-31"))
        let (groups, byState) = try await store.read { reader in
            (
                try await reader.crashGroups(app: Self.app, ids: [1]),
                try await reader.diagnostics(scope.grouped(by: [.appState]))
            )
        }
        #expect(groups.first?.sampleFrames.map(\.offset) == [16432])
        #expect(byState.map(\.count) == [1])
        #expect(byState.first?.key.appState?.label == "Home")
        // New diagnostics take ids after the moved ones.
        _ = try await store.write(
            IngestRequest(app: Self.app, items: try Self.items(devices: 4, days: 1, seed: 3)))
        let ids = try await store.read { reader in
            try await reader.diagnostics(Scope(app: Self.app, days: DayRange(from: "2000-01-01", to: "2100-01-01")))
        }
        #expect(!ids.isEmpty)
        await store.shutdown()
    }

    @Test(
        "diagnostics and frames of recent days are partitioned by day; retention drops a day whole and the crash groups it empties"
    )
    func diagnosticPartitions() async throws {
        guard let store = try await Self.store() else { return }
        let now = Int64(Date().timeIntervalSince1970)
        let today = UTCDay(epochSeconds: now)
        func crash(at seconds: Int64, signal: Int) throws -> [IngestItem] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
            let stamp = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            let json = """
                {"timeStampBegin": "\(stamp)", "timeStampEnd": "\(stamp)",
                 "crashDiagnostics": [{"version": "1.0.0",
                  "diagnosticMetaData": {"appVersion": "1.0", "appBuildVersion": "1", "osVersion": "iPhone OS 17.4 (21E219)",
                    "deviceType": "iPhone15,2", "regionFormat": "US", "platformArchitecture": "arm64",
                    "bundleIdentifier": "\(Self.app)", "exceptionType": 1, "exceptionCode": 0, "signal": \(signal)},
                  "callStackTree": {"callStackPerThread": true, "callStacks": [{"threadAttributed": true,
                    "callStackRootFrames": [{"binaryUUID": "00000000-0000-0000-0000-00000000000\(signal % 10)",
                      "binaryName": "Demo", "offsetIntoBinaryTextSegment": 16432, "address": 4295000112, "sampleCount": 1}]}]}}]}
                """
            return try IngestPipeline().prepare(
                body: ByteBuffer(string: json), encoding: .identity, family: .diagnostic, app: Self.app, receivedAt: 0)
        }
        _ = try await store.write(IngestRequest(app: Self.app, items: try crash(at: now - 60, signal: 11)))
        _ = try await store.write(IngestRequest(app: Self.app, items: try crash(at: now - 400 * 86_400, signal: 6)))
        #expect(try await store.partitions(of: "diagnostics") == [today.string])
        #expect(try await store.partitions(of: "diagnostic_frames") == [today.string])
        let everything = Scope(app: Self.app, days: DayRange(from: "2000-01-01", to: "2100-01-01"))
        func crashes() async throws -> [CrashGroupInfo] {
            try await store.read { reader in
                try await reader.crashGroups(
                    app: Self.app, ids: try await reader.diagnostics(everything).map(\.crashGroup))
            }
        }
        let before = try await crashes()
        #expect(before.count == 2)
        #expect(before.allSatisfy { $0.sampleFrames.count == 1 })
        // Data kept 30 days, seen 40 days from now: today's partitions go whole, the old crash
        // leaves the default partitions, and both groups are emptied.
        var policy = RetentionPolicy.keepForever
        policy.dataDays = 30
        let report = try await store.prune(policy: policy, now: now + 40 * 86_400)
        #expect(report.payloads == 2)
        #expect(report.crashGroups == 2)
        #expect(try await store.partitions(of: "diagnostics").isEmpty)
        #expect(try await store.partitions(of: "diagnostic_frames").isEmpty)
        #expect(try await crashes().isEmpty)
        #expect(try await store.read { try await $0.diagnostics(everything) }.isEmpty)
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
