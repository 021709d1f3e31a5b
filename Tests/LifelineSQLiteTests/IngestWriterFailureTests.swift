import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import ServiceLifecycle
import Testing

extension IngestWriterTests {
    @Test("a full disk fails the batch with unavailable and leaves no partial rows")
    func diskFullIsUnavailable() async throws {
        let temp = TemporaryDirectory()
        let setup = try temp.openDatabase()
        let pages = try #require(try setup.query("PRAGMA page_count").first?.first?.integer)
        let database = try Database(path: temp.databasePath, options: Database.Options(maxPageCount: Int(pages) + 1))
        let writer = try IngestWriter(database: database)
        let big = Fixtures.item(
            .metric(Fixtures.metric()), hashSeed: "big", raw: [UInt8](repeating: 7, count: 300_000))
        let small = Fixtures.item(.metric(Fixtures.metric()), hashSeed: "small")
        let error = await #expect(throws: StoreError.self) {
            try await writer.submit(IngestRequest(app: Fixtures.app, items: [small, big]))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("SQL") == false)
        await writer.shutdown()
        #expect(writer.statistics.failedBatches >= 1)
        #expect(try setup.payloadCount() == 0)
        for table in ["apps", "payloads", "payload_raw", "exit_counts", "scalar_metrics", "app_versions"] {
            #expect(try setup.query("SELECT count(*) FROM \(table)") == [[.integer(0)]], "rows left in \(table)")
        }
        #expect(try setup.integrityCheck() == "ok")
    }

    @Test("submitting after shutdown is unavailable; the service stops on graceful shutdown")
    func serviceLifecycle() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = try IngestWriter(database: database)
        let group = ServiceGroup(services: [writer], logger: .init(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let outcome = try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: "s")]))
            #expect(outcome.accepted == 1)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let error = await #expect(throws: StoreError.self) {
            try await writer.submit(IngestRequest(app: Fixtures.app, items: []))
        }
        #expect(error?.code == .unavailable)
        await writer.shutdown()
    }

    @Test("stored data survives closing and reopening the database")
    func dataSurvivesReopen() async throws {
        let temp = TemporaryDirectory()
        var ids: [Int64] = []
        do {
            let database = try temp.openDatabase()
            ids = try await IngestWriter.withWriter(database: database) { writer in
                try await writer.submit(
                    IngestRequest(
                        app: Fixtures.app,
                        items: [
                            Fixtures.item(.metric(Fixtures.metric()), hashSeed: "r1", raw: [9, 8, 7]),
                            Fixtures.item(
                                .diagnostic(Fixtures.diagnosticPayload([Fixtures.hang(version: "2")])), hashSeed: "r2"),
                        ])
                ).ids
            }
        }
        let reopened = try temp.openDatabase()
        #expect(try reopened.payloadCount() == 2)
        #expect(try reopened.payload(id: ids[0])?.raw == [9, 8, 7])
        #expect(try reopened.crashGroups(app: Fixtures.app).count == 1)
        #expect(try reopened.payload(id: 999) == nil)
        // Dedup state survives too.
        let again = try await IngestWriter.withWriter(database: reopened) { writer in
            try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: "r1")]))
        }
        #expect(again.duplicates == 1 && again.ids == [ids[0]])
    }

    /// Submits `count` requests at once (the items of request `index` from `items`), as many
    /// clients would; the result of each by index.
    static func submitConcurrently(
        _ writer: IngestWriter, count: Int, items: @escaping @Sendable (Int) -> [IngestItem]
    ) async -> [Int: Result<IngestOutcome, StoreError>] {
        await withTaskGroup(of: (Int, Result<IngestOutcome, StoreError>).self) { group in
            for index in 0..<count {
                group.addTask {
                    // Not `do throws(StoreError) { return … }`: in release builds (Swift 6.3.1) that shape
                    // returned a garbage `index` from this async closure.
                    let result: Result<IngestOutcome, StoreError>
                    do {
                        result = .success(
                            try await writer.submit(IngestRequest(app: Fixtures.app, items: items(index))))
                    } catch let error as StoreError {
                        result = .failure(error)
                    } catch {
                        result = .failure(StoreError(.internal, "unexpected error \(error)"))
                    }
                    return (index, result)
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    @Test(
        "an app state created by a document whose fold fails is forgotten with it: the next document of that state folds"
    )
    func stateIDForgottenWithItsDocument() async throws {
        let sqlite = try TemporaryDatabase()
        let report = String(
            decoding: try Paths.fixture("ios27/HitchScope__metric-20260913T053136.822.json"), as: UTF8.self)
        func count(_ sql: String) throws -> SQLValue { try sqlite.database.query(sql)[0][0] }
        // The report's exit rows are refused: its fold fails after it created its app states.
        try sqlite.database.execute(
            """
            CREATE TRIGGER refuse_exits BEFORE INSERT ON payload_states WHEN NEW.exits IS NOT NULL
            BEGIN SELECT RAISE(ABORT, 'test'); END
            """)
        try await IngestWriter.withWriter(database: sqlite.database, logger: .quiet) { writer in
            try await TemporaryDatabase.ingest([report], into: writer, app: "com.hitchscope")
            while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(writer.statistics.foldSkipped == 1)
            #expect(try count("SELECT count(*) FROM app_state_values") == .integer(0))
            // The same report with another figure (not a duplicate) folds: its states are created
            // anew, not taken from a cache that still held the rolled-back ids.
            try sqlite.database.execute("DROP TRIGGER refuse_exits")
            try await TemporaryDatabase.ingest(
                [
                    report.replacingOccurrences(
                        of: "\"normalTerminationCount\":1", with: "\"normalTerminationCount\":3")
                ], into: writer, app: "com.hitchscope")
            while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(writer.statistics.foldSkipped == 1)
        }
        let states = try count("SELECT count(*) FROM app_state_values")
        #expect(states != .integer(0))
        #expect(try count("SELECT count(DISTINCT app_state) FROM payload_states") == states)
        #expect(try count("SELECT count(*) FROM payload_states WHERE exits IS NOT NULL") != .integer(0))
    }
}
