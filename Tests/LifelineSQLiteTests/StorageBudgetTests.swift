import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("Storage budget")
struct StorageBudgetTests {
    @Test("a reference metric payload costs under 4 KB stored, raw included (rollups reported apart)")
    func bytesPerReferencePayload() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        var rng = SeededGenerator(seed: 1)
        // Warm up the lookups so the measurement is about steady state.
        let count = 2_000
        let rawSize = 2_400
        var items: [IngestItem] = []
        for index in 0..<(count + 200) {
            let raw = (0..<rawSize).map { _ in UInt8.random(in: 0...255, using: &rng) }  // incompressible, like gzip
            items.append(
                Fixtures.item(.metric(Fixtures.referenceMetric(index, using: &rng)), hashSeed: "ref\(index)", raw: raw))
        }
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        var before: Int64 = 0
        var rollupsBefore: Int64 = 0
        try await IngestWriter.withWriter(database: database) { writer in
            _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: Array(items[0..<200])))
            try database.checkpoint()
            before = try database.fileBytes()
            rollupsBefore = try Self.rollupBytes(database)
            let start = clock.now
            for chunk in stride(from: 200, to: items.count, by: 100) {
                _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: Array(items[chunk..<chunk + 100])))
            }
            elapsed = clock.now - start
        }
        try database.checkpoint()
        let after = try database.fileBytes()
        // Rollups are a cost per (day, version, OS, device) cell, not per payload: with this fixture's
        // 2,200 payloads nearly every payload is its own cell, so they are reported apart.
        let rollups = try Self.rollupBytes(database) - rollupsBefore
        let perPayload = Double(after - before - rollups) / Double(count)
        print("storage: rollups \(rollups / Int64(count)) bytes per payload at this density (not in the budget)")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "storage: \(Int(perPayload)) bytes per reference metric payload (raw \(rawSize) B);"
                + " writer: \(Int(Double(count) / seconds)) payloads/s in requests of 100 documents")
        let tables = try database.query(
            """
            SELECT name, sum(pgsize) / \(count + 200), sum(unused) / \(count + 200), sum(ncell), sum(payload) / max(1, sum(ncell))
            FROM dbstat GROUP BY name HAVING sum(pgsize) > 20000 ORDER BY sum(pgsize) DESC
            """)
        for row in tables {
            print("storage:   " + row.map { $0.text ?? $0.integer.map(String.init) ?? "-" }.joined(separator: " "))
        }
        #expect(perPayload < 4_096)
        #expect(try database.integrityCheck() == "ok")
    }

    /// Bytes of the pages of the rollup tables.
    static func rollupBytes(_ database: Database) throws -> Int64 {
        try database.query("SELECT total(pgsize) FROM dbstat WHERE name LIKE 'rollup%'").first?.first?.real.map {
            Int64($0)
        } ?? 0
    }
}

@Suite("Writer throughput")
struct WriterThroughputTests {
    @Test("single-document requests from 64 concurrent clients are group-committed")
    func concurrentSingleDocumentRequests() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        var rng = SeededGenerator(seed: 2)
        let count = 2_000
        var items: [IngestItem] = []
        for index in 0..<count {
            let raw = (0..<2_400).map { _ in UInt8.random(in: 0...255, using: &rng) }
            items.append(
                Fixtures.item(.metric(Fixtures.referenceMetric(index, using: &rng)), hashSeed: "t\(index)", raw: raw))
        }
        let all = items
        let writer = try IngestWriter(database: database)
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<64 {
                group.addTask {
                    for index in stride(from: client, to: count, by: 64) {
                        _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [all[index]]))
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        await writer.shutdown()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let stats = writer.statistics
        print(
            "throughput: \(Int(Double(count) / seconds)) payloads/s, \(stats.transactions) transactions,"
                + " largest batch \(stats.largestBatch) (synchronous=FULL)")
        #expect(try database.payloadCount() == count)
        #expect(stats.transactions < count / 4)
    }
}
