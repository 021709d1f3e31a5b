import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Ingest writer")
struct IngestWriterTests {
    /// The observer once came back from its lock wrapped in two more thunks at every call: each
    /// call ran through all the calls before it, so a server's commits grew slower with its
    /// uptime. Here the old code hit the time limit, then crashed (the stack); this takes
    /// milliseconds.
    @Test("the batch observer is told every commit, each call as cheap as the first", .timeLimit(.minutes(1)))
    func batchObserverStaysFlat() {
        let observer = BatchObserver()
        let total = Atomic<Int>(0)
        observer.set { total.add($0, ordering: .relaxed) }
        for _ in 0..<200_000 { observer.batchCommitted(requests: 3) }
        #expect(total.load(ordering: .relaxed) == 600_000)
    }

    @Test("a metric document is stored as its index row and raw copy, and folded exactly")
    func metricDocumentWritesExactRows() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let item = Fixtures.item(.metric(Fixtures.metric()), hashSeed: "m1", raw: [0x1f, 0x8b, 1, 2, 3], unparsed: 1)
        let outcome = try await IngestWriter.withWriter(database: database) { writer in
            try await writer.submit(IngestRequest(app: Fixtures.app, items: [item]))
        }
        #expect(outcome.accepted == 1 && outcome.duplicates == 0 && outcome.ids.count == 1 && !outcome.replayed)

        let payload = try #require(try database.payload(id: outcome.ids[0]))
        #expect(payload.app == Fixtures.app)
        #expect(payload.kind == .metric)
        #expect(payload.appVersion == "4.1.0")
        #expect(payload.build == "412")
        #expect(payload.osVersion == "iPhone OS 17.4 (21E219)")
        #expect(payload.deviceType == "iPhone15,2")
        #expect(payload.region == "US")
        #expect(payload.architecture == "arm64e")
        #expect(payload.day == "2019-10-21")
        #expect(payload.begin == Int64(1_571_641_200))
        #expect(payload.end == Int64(1_571_727_540))
        #expect(payload.beginRaw == nil && payload.endRaw == nil)
        #expect(payload.receivedAt == 1_700_000_000_000)
        #expect(payload.contentHash == Fixtures.sha256("m1"))
        #expect(payload.raw == [0x1f, 0x8b, 1, 2, 3])
        #expect(payload.unparsedMeasurements == 1)
        #expect(try database.payloadCount(app: Fixtures.app, kind: .metric) == 1)
        #expect(try database.payloadCount(kind: .diagnostic) == 0)

        // Zero counters are not stored.
        #expect(
            try database.exitTotals(app: Fixtures.app) == [
                ExitCount(state: .foreground, reason: "NormalApp", count: 5),
                ExitCount(state: .background, reason: "BackgroundTaskAssertionTimeout", count: 3),
                ExitCount(state: .background, reason: "MemoryPressure", count: 13),
            ])
        // The door writes the index row and the raw copy; the fold writes the figures, and no
        // per-payload normalized rows (migration 0012).
        for table in ["exit_counts", "signposts", "histograms", "scalar_metrics"] {
            #expect(try database.query("SELECT count(*) FROM \(table)") == [[.integer(0)]], "\(table)")
        }
        #expect(try database.query("SELECT folded_through FROM aggregation_state") == [[.integer(outcome.ids[0])]])
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("diagnostics keep their own metadata, top frames and crash groups")
    func diagnosticDocumentWritesRows() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let document = Fixtures.diagnosticPayload([
            Fixtures.crash(version: "1.0", fingerprint: "aaaaaaaaaaaaaaaa"),
            Fixtures.crash(version: "1.1", fingerprint: "aaaaaaaaaaaaaaaa", build: "101"),
            Fixtures.hang(version: "1.1"),
        ])
        let bare = Fixtures.diagnosticPayload(
            [Fixtures.crash(version: "1.2", fingerprint: "aaaaaaaaaaaaaaaa")], begin: nil)
        let outcome = try await IngestWriter.withWriter(database: database) { writer in
            try await writer.submit(
                IngestRequest(
                    app: Fixtures.app,
                    items: [
                        Fixtures.item(.diagnostic(document), hashSeed: "d1"),
                        Fixtures.item(.diagnostic(bare), hashSeed: "d2", receivedAt: 1_700_000_123_456),
                    ]))
        }
        #expect(outcome.accepted == 2)
        let first = try #require(try database.payload(id: outcome.ids[0]))
        #expect(first.kind == .diagnostic && first.appVersion == "1.0" && first.day == "2019-10-21")
        let second = try #require(try database.payload(id: outcome.ids[1]))
        #expect(second.begin == nil && second.day == "2023-11-14")

        let rows = try database.query(
            """
            SELECT d.kind, v.value, b.value, d.occurred_at, d.exception_type, d.signal, d.termination_reason,
                d.objc_exception_name, d.objc_class_name, d.objc_composed_message, d.primary_value, d.primary_raw
            FROM diagnostics d LEFT JOIN app_versions v ON v.id = d.app_version LEFT JOIN builds b ON b.id = d.build
            ORDER BY d.payload, d.ordinal
            """)
        #expect(rows.count == 4)
        #expect(
            rows[0] == [
                .text("crash"), .text("1.0"), .text("100"), .integer(1_571_641_200), .integer(1), .integer(11),
                .text("Namespace SIGNAL, Code 11"), .text("NSGenericException"), .text("NSException"), .text("boom"),
                .null, .null,
            ])
        #expect(rows[1][1] == .text("1.1") && rows[1][2] == .text("101"))
        #expect(rows[2][0] == .text("hang") && rows[2][10] == .real(20_000))
        #expect(rows[3][1] == .text("1.2") && rows[3][3] == .integer(1_700_000_123))

        let frames = try database.query(
            """
            SELECT f.position, f.binary_name, f.binary_uuid, f.address, f.offset FROM diagnostic_frames f
            JOIN diagnostics d ON d.id = f.diagnostic WHERE d.payload = ? AND d.ordinal = 0 ORDER BY f.position
            """, [.integer(outcome.ids[0])])
        #expect(
            frames == [
                [
                    .integer(0), .text("MyApp"), .text("AAAA-1"), .integer(Int64(bitPattern: 0xFFFF_0000_0000_1234)),
                    .integer(0x1234),
                ],
                [.integer(1), .text("UIKitCore"), .text("BBBB-2"), .integer(7_000), .integer(700)],
            ])

        let groups = try database.crashGroups(app: Fixtures.app)
        #expect(groups.count == 2)
        #expect(groups[0].fingerprint == "aaaaaaaaaaaaaaaa" && groups[0].count == 3 && groups[0].groupKind == "crash")
        #expect(groups[0].firstSeen == 1_571_641_200 && groups[0].lastSeen == 1_700_000_123)
        #expect(groups[0].title == "EXC_BAD_ACCESS / SIGSEGV at MyApp +0x1234")
        #expect(groups[1].fingerprint == "hang0000000000001" && groups[1].count == 1)
    }

    @Test("a document stored twice is a duplicate and counted once, crash groups included")
    func duplicatesAreNotDoubleCounted() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let crash = Fixtures.item(
            .diagnostic(Fixtures.diagnosticPayload([Fixtures.crash(version: "1.0", fingerprint: "bbbbbbbbbbbbbbbb")])),
            hashSeed: "c1")
        let metric = Fixtures.item(.metric(Fixtures.metric()), hashSeed: "m1")
        try await IngestWriter.withWriter(database: database) { writer in
            let first = try await writer.submit(IngestRequest(app: Fixtures.app, items: [crash, metric, crash]))
            #expect(first.accepted == 2 && first.duplicates == 1)
            #expect(first.ids[2] == first.ids[0])
            let again = try await writer.submit(IngestRequest(app: Fixtures.app, items: [metric, crash]))
            #expect(again.accepted == 0 && again.duplicates == 2 && !again.replayed)
            #expect(again.ids == [first.ids[1], first.ids[0]])
            // The same content for another app is that app's own payload.
            var other = metric
            other.app = "com.example.other"
            let otherOutcome = try await writer.submit(IngestRequest(app: "com.example.other", items: [other]))
            #expect(otherOutcome.accepted == 1)
        }
        #expect(try database.payloadCount(app: Fixtures.app) == 2)
        #expect(try database.crashGroups(app: Fixtures.app).map(\.count) == [1])
        #expect(try database.exitTotals(app: Fixtures.app).first { $0.reason == "MemoryPressure" }?.count == 13)
        #expect(try database.query("SELECT count(*) FROM diagnostics") == [[.integer(1)]])
    }

    @Test("a repeated idempotency key replays the first outcome as all duplicates")
    func idempotencyKeyReplays() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let items = [
            Fixtures.item(.metric(Fixtures.metric()), hashSeed: "a"),
            Fixtures.item(.metric(Fixtures.metric(day: 22)), hashSeed: "b"),
        ]
        try await IngestWriter.withWriter(database: database) { writer in
            let first = try await writer.submit(IngestRequest(app: Fixtures.app, items: items, idempotencyKey: "k-1"))
            #expect(first == IngestOutcome(accepted: 2, duplicates: 0, ids: first.ids, replayed: false))
            // Same key, even with other content: the stored answer, nothing written.
            let retry = try await writer.submit(
                IngestRequest(
                    app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: "c")],
                    idempotencyKey: "k-1"))
            #expect(retry == IngestOutcome(accepted: 0, duplicates: 2, ids: first.ids, replayed: true))
            // Concurrent retries with one key are answered consistently.
            let results = try await withThrowingTaskGroup(of: IngestOutcome.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await writer.submit(
                            IngestRequest(app: Fixtures.app, items: [items[0]], idempotencyKey: "k-2"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { !$0.replayed }.count == 1)
            #expect(Set(results.flatMap(\.ids)) == [first.ids[0]])
        }
        #expect(try database.payloadCount() == 2)
    }

    @Test("200 concurrent submits are all committed in far fewer transactions")
    func concurrentSubmitsAreGroupCommitted() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = try IngestWriter(database: database)
        let ids = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for index in 0..<200 {
                group.addTask {
                    let item = Fixtures.item(.metric(Fixtures.metric(version: "v\(index % 7)")), hashSeed: "p\(index)")
                    return try await writer.submit(IngestRequest(app: Fixtures.app, items: [item])).ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        await writer.shutdown()
        let stats = writer.statistics
        #expect(Set(ids).count == 200)
        #expect(stats.requests == 200)
        #expect(stats.transactions < 200)
        #expect(stats.largestBatch > 1)
        #expect(try database.payloadCount(app: Fixtures.app) == 200)
        #expect(try database.query("SELECT count(*) FROM app_versions") == [[.integer(7)]])
    }

    @Test("a rejected request is rolled back alone; the rest of the batch commits")
    func failingRequestIsIsolated() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = try IngestWriter(database: database)
        var invalid = Fixtures.item(.metric(Fixtures.metric()), hashSeed: "bad")
        invalid.contentHash = [1, 2, 3]
        let bad = invalid
        let results = await Self.submitConcurrently(writer, count: 40) { index in
            let good = Fixtures.item(.metric(Fixtures.metric()), hashSeed: "good\(index)")
            return index % 10 == 0 ? [good, bad] : [good]
        }
        await writer.shutdown()
        #expect(results.count == 40, "\(results.keys.sorted())")
        for (index, result) in results {
            switch result {
            case .success(let outcome): #expect(index % 10 != 0, "\(index): \(outcome)")
            case .failure(let error):
                #expect(index % 10 == 0)
                #expect(error.code == .invalid)
            }
        }
        // The good item of each rejected request is not kept either (a request is atomic).
        #expect(try database.payloadCount() == 36)
    }

    @Test("a document that breaks the transaction fails alone; the other clients' requests in its batch commit")
    func poisonedDocumentFailsOnlyItsOwnRequest() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // A real SQLite failure that is not a constraint (SQLITE_ERROR from json()): it used to
        // abort the whole group-commit batch.
        try database.execute(
            """
            CREATE TRIGGER poison AFTER INSERT ON payloads WHEN NEW.unparsed_measurements = 7
            BEGIN SELECT json('not json'); END
            """)
        let writer = try IngestWriter(database: database)
        let results = await Self.submitConcurrently(writer, count: 60) { index in
            [Fixtures.item(.metric(Fixtures.metric()), hashSeed: "client\(index)", unparsed: index % 15 == 0 ? 7 : 0)]
        }
        await writer.shutdown()
        #expect(writer.statistics.largestBatch > 1, "the poisoned documents must share batches with healthy ones")
        for (index, result) in results {
            switch result {
            case .success(let outcome):
                #expect(index % 15 != 0, "\(index): \(outcome)")
                #expect(outcome.accepted == 1)
            case .failure(let error):
                #expect(index % 15 == 0, "\(index): \(error)")
                #expect(error.code == .internal)
            }
        }
        #expect(try database.payloadCount() == 56)
        #expect(try database.integrityCheck() == "ok")
    }
}
