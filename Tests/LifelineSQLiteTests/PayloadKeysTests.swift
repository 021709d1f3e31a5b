import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@testable import LifelineSQLite

@Suite("The door's lookups filled in bulk: payload_keys, payload_days and the tail (migration 0031)")
struct PayloadKeysTests {
    /// A request of one metric document whose content hash comes from `seed`, for `day` of October 2026.
    static func request(_ seed: String, day: Int = 21) -> IngestRequest {
        IngestRequest(
            app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric(day: day)), hashSeed: seed)])
    }

    static func outcome(_ result: BatchWriter.BatchResult) -> IngestOutcome? {
        guard case .success(let outcome) = result.results.first else { return nil }
        return outcome
    }

    static func count(_ table: String, _ database: Database) throws -> [[SQLValue]] {
        try database.query("SELECT count(*) FROM \(table)")
    }

    @Test(
        "a repeat is found in the tail, in payload_keys after a merge, and after a restart from either; payloads_by_day lists each payload once"
    )
    func repeatsFoundEverywhere() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        var writer = BatchWriter(connection: try database.openConnection())
        let first = try #require(Self.outcome(writer.write([Self.request("a"), Self.request("b")])))
        #expect(first.accepted == 1 && first.ids.count == 1)
        // In the tail: nothing indexed yet, every payload listed by day through the tail.
        #expect(try Self.count("payload_keys", database) == [[.integer(0)]])
        #expect(try Self.count("payloads_by_day", database) == [[.integer(2)]])
        let repeated = try #require(Self.outcome(writer.write([Self.request("a")])))
        #expect(repeated.duplicates == 1 && repeated.ids == first.ids)

        // Merged: both tables hold both payloads, the watermark covers them, the view lists them once.
        #expect(try writer.keys.merge(on: writer.connection) == 2)
        #expect(writer.keys.tail.isEmpty)
        #expect(try Self.count("payload_keys", database) == [[.integer(2)]])
        #expect(try Self.count("payload_days", database) == [[.integer(2)]])
        #expect(try Self.count("payloads_by_day", database) == [[.integer(2)]])
        #expect(try database.query("SELECT indexed_through FROM aggregation_state") == [[.integer(2)]])
        #expect(Self.outcome(writer.write([Self.request("a")]))?.ids == first.ids)

        // A third payload stays in the tail; a new writer (a restart) reads it back and finds all three.
        let third = try #require(Self.outcome(writer.write([Self.request("c", day: 22)])))
        #expect(third.accepted == 1)
        // /v1/apps counts both parts: two payloads indexed, one in the tail.
        #expect(
            try await database.reads.apps() == [
                AppInfo(
                    bundleID: Fixtures.app, metricPayloads: 3, diagnosticPayloads: 0, firstDay: "2019-10-21",
                    lastDay: "2019-10-22")
            ])
        writer.close()
        writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        for (seed, ids) in [("a", first.ids), ("c", third.ids)] {
            let again = try #require(Self.outcome(writer.write([Self.request(seed)])))
            #expect(again.duplicates == 1 && again.ids == ids)
        }
        #expect(writer.keys.tail.count == 1)
        #expect(try database.payloadCount() == 3)
        #expect(
            try database.query("SELECT day, count(*) FROM payloads_by_day WHERE app = 1 GROUP BY day ORDER BY day")
                == [[.text("2019-10-21"), .integer(2)], [.text("2019-10-22"), .integer(1)]])
    }

    @Test(
        "a merge in steps of two keys: the door writes between them, a repeat is found at every step, the watermark moves at the last one only"
    )
    func mergeInSteps() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        writer.keys.chunkEntries = 2
        let seeds = ["a", "b", "c", "d", "e"]
        var ids: [String: [Int64]] = [:]
        for seed in seeds { ids[seed] = Self.outcome(writer.write([Self.request(seed)]))?.ids }
        var steps = 0
        var late: [Int64] = []
        while try !writer.keys.mergeStep(on: writer.connection) {
            steps += 1
            #expect(try database.query("SELECT indexed_through FROM aggregation_state") == [[.integer(0)]])
            #expect(try Self.count("payload_days", database) == [[.integer(0)]])
            for seed in seeds {
                #expect(Self.outcome(writer.write([Self.request(seed)]))?.ids == ids[seed])
            }
            late += Self.outcome(writer.write([Self.request("late\(steps)")]))?.ids ?? []
        }
        #expect(steps == 2)  // three steps: two keys, two keys, one key
        #expect(late == [6, 7])
        #expect(try database.query("SELECT indexed_through FROM aggregation_state") == [[.integer(5)]])
        #expect(
            try database.query("SELECT payload FROM payload_keys ORDER BY payload") == (1...5).map { [.integer($0)] })
        #expect(try Self.count("payload_days", database) == [[.integer(5)]])
        #expect(try Self.count("payloads_by_day", database) == [[.integer(7)]])
        #expect(writer.keys.tail.values.sorted() == late)
        #expect(try writer.keys.merge(on: writer.connection) == 2)
        #expect(try Self.count("payload_keys", database) == [[.integer(7)]])
    }

    /// A door stage that fails the request of one content.
    final class FailingStage: ItemWriteStage {
        let hash: [UInt8]
        init(seed: String) { hash = Fixtures.sha256(seed) }
        func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
            if stored.item.contentHash == hash { throw StoreError(.invalid, "refused by the test") }
        }
    }

    @Test("a key gives back the hash it was made of, and orders as payload_keys does (app, then the hash's bytes)")
    func keyRoundTripsAndOrders() throws {
        let hash = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let key = try #require(PayloadKeys.Key(app: 3, hash: hash))
        #expect(key.hash == hash)
        var larger = hash
        larger[31] &+= 1
        #expect(key < (try #require(PayloadKeys.Key(app: 3, hash: larger))))
        #expect(key < (try #require(PayloadKeys.Key(app: 4, hash: [UInt8](repeating: 0, count: 32)))))
        #expect(PayloadKeys.bound(key) == [.integer(3), .blob(hash)])
        #expect(PayloadKeys.bound(nil) == [.null, .null])
    }

    @Test("a payload whose request rolled back is not taken for a duplicate: its content is stored at the next try")
    func rolledBackForgotten() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let failing = BatchWriter(connection: try database.openConnection(), stages: [FailingStage(seed: "x")])
        let batch = failing.write([Self.request("ok"), Self.request("x")])
        #expect(batch.committed)
        #expect(Self.outcome(batch)?.accepted == 1)
        guard case .failure = batch.results.last else {
            Issue.record("the refused request was not rolled back")
            return
        }
        #expect(failing.keys.tail.count == 1)
        failing.close()
        let writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        let stored = try #require(Self.outcome(writer.write([Self.request("x")])))
        #expect(stored.accepted == 1 && stored.duplicates == 0)
        #expect(try database.payloadCount() == 2)
    }

    @Test("two writers on one file (a server and `lifeline ingest`) each find what the other stored")
    func otherWriterSeen() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let one = BatchWriter(connection: try database.openConnection())
        let two = BatchWriter(connection: try database.openConnection())
        defer {
            one.close()
            two.close()
        }
        #expect(Self.outcome(two.write([Self.request("warm")]))?.accepted == 1)
        let stored = try #require(Self.outcome(one.write([Self.request("a")])))
        let seen = try #require(Self.outcome(two.write([Self.request("a")])))
        #expect(seen.duplicates == 1 && seen.ids == stored.ids)
        #expect(try two.keys.merge(on: two.connection) == 2)
        // `one` never merged: its tail holds entries the tables now hold too, and it still answers.
        #expect(Self.outcome(one.write([Self.request("warm")]))?.duplicates == 1)
        #expect(try database.payloadCount() == 2)
    }

    @Test("pruning a payload forgets its lookups: the same content posted again is stored anew, once")
    func prunedForgotten() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        let old = try #require(Self.outcome(writer.write([Self.request("old", day: 1), Self.request("new", day: 28)])))
        #expect(old.accepted == 1)
        _ = Self.outcome(writer.write([Self.request("new", day: 28)]))
        #expect(try writer.keys.merge(on: writer.connection) == 2)
        _ = try writer.fold(limit: 10)
        // 2019-10-30: days before 2019-10-15 go.
        let policy = RetentionPolicy(rawDays: 0, dataDays: 16, idempotencyDays: 0, alertHistoryDays: 0)
        let report = try await Pruner(database: database, policy: policy, options: .init(pause: .zero))
            .run(now: 1_572_393_600)
        #expect(report.payloads == 1)
        #expect(try database.query("SELECT day FROM payload_days") == [[.text("2019-10-28")]])
        #expect(try Self.count("payload_keys", database) == [[.integer(1)]])
        let again = try #require(Self.outcome(writer.write([Self.request("old", day: 1)])))
        #expect(again.accepted == 1 && again.ids != old.ids)
        #expect(Self.outcome(writer.write([Self.request("old", day: 1)]))?.ids == again.ids)
    }

    @Test(
        "migration 0031 rebuilds payloads without losing a row that references them, fills both tables up to its watermark, and ids are never reused"
    )
    func migrationRebuilds() throws {
        let temp = TemporaryDirectory()
        let database = try StateExitsPackedTests.migrated(from: 31, rows: [], in: temp)
        #expect(try Self.count("payload_keys", database) == [[.integer(2)]])
        #expect(try Self.count("payload_days", database) == [[.integer(2)]])
        #expect(try database.query("SELECT indexed_through FROM aggregation_state") == [[.integer(2)]])
        #expect(try Self.count("payload_states", database) == [[.integer(3)]])
        #expect(
            try database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'payloads_by_app_kind_day'")
                == [[.integer(0)]])
        #expect(try database.query("PRAGMA foreign_key_check").isEmpty)
        #expect(try database.query("PRAGMA foreign_keys") == [[.integer(1)]])
        // The newest payload deleted: the next one takes a new id, above every watermark.
        try database.execute("DELETE FROM payloads WHERE id = 2")
        let writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        #expect(Self.outcome(writer.write([Self.request("fresh")]))?.ids == [3])
    }
}

extension PayloadKeys {
    /// A whole merge, step after step: the tail entries it moved.
    @discardableResult
    mutating func merge(on connection: Connection) throws(StoreError) -> Int {
        let before = tail.count
        while try !mergeStep(on: connection) {}
        return before - tail.count
    }
}
