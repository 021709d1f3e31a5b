import Foundation
import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("WAL checkpoints beside the writer")
struct CheckpointerTests {
    static func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test("committed pages reach the database file without SQLite's automatic checkpoint")
    func walCopiedIntoTheDatabaseFile() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // Far below the writer's automatic threshold (16,000 pages), and the database stays open
        // (no checkpoint on close): only the checkpointer thread copies WAL frames into the file.
        let before = Self.fileSize(temp.databasePath)
        var rng = SeededGenerator(seed: 11)
        try await IngestWriter.withWriter(database: database) { writer in
            for index in 0..<40 {
                let item = Fixtures.item(.metric(Fixtures.referenceMetric(index, using: &rng)), hashSeed: "ck\(index)")
                _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [item]))
            }
        }
        let after = Self.fileSize(temp.databasePath)
        #expect(after > before + 100_000, "database file \(before) → \(after) bytes")
        // Everything in the WAL is in the file: a checkpoint now finds nothing left to copy.
        let result = try database.query("PRAGMA wal_checkpoint(PASSIVE)")
        let row = try #require(result.first)
        #expect(row[1] == row[2], "WAL frames \(row[1]) vs checkpointed \(row[2])")
        #expect(try database.payloadCount(kind: .metric) == 40)
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("SQLite counts no memory once a connection opened: no process-wide mutex on every allocation")
    func memoryStatisticsOff() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        #expect(try database.payloadCount(kind: .metric) == 0)
        #expect(!SQLiteLibrary.countsMemory)
    }
}
