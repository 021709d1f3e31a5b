import Foundation
import Logging
import LifelineIngest
import LifelineModel
@testable import LifelineSQLite
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

    /// A writer (automatic checkpoints off) that wrote 50 rows of 8,000 bytes into `filler` while
    /// the reader holds the snapshot it took before them: the WAL holds them all.
    static func growingWAL(_ database: Database) throws -> (writer: Connection, reader: Connection) {
        let writer = try database.openConnection()
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE filler (value BLOB)")
        let reader = try database.openConnection()
        try reader.execute("BEGIN")
        _ = try reader.first("SELECT count(*) FROM filler", []) { $0.int64(0) }
        try fill(writer)
        return (writer, reader)
    }

    static func fill(_ writer: Connection) throws {
        for _ in 0..<50 { try writer.run("INSERT INTO filler VALUES (zeroblob(8000))", []) }
    }

    @Test("past its cap the WAL restarts: written over from its start, the file cut back to the limit")
    func walRestartedPastItsCap() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // Passive checkpoints copy what they can but the log keeps its length.
        let (writer, reader) = try Self.growingWAL(database)
        defer {
            writer.close()
            reader.close()
        }
        let wal = database.path + "-wal"
        let grown = Self.fileSize(wal)
        #expect(grown > 50 * 8_000)
        // As the server's writer has it: a restarted log longer than this is cut back to it.
        let limit = 200_000
        _ = try writer.query("PRAGMA journal_size_limit = \(limit)") { $0.int64(0) }
        let checkpointer = Checkpointer(
            connection: try database.openConnection(busyTimeoutMilliseconds: 20), interval: 1, capPages: 20,
            logger: Logger(label: "test"))
        defer { checkpointer.stop() }
        // While the reader holds its snapshot, the restart waits 20 ms and gives up: the next
        // write goes on at the log's end.
        checkpointer.committed()
        Thread.sleep(forTimeInterval: 0.3)
        try writer.run("INSERT INTO filler VALUES (1)", [])
        #expect(Self.fileSize(wal) > grown)
        // Once it ends, the checkpointer's last round restarts the log: the next write starts
        // from its beginning, and the file is cut back to the limit (not to nothing, which would
        // make every later frame grow it again).
        try reader.execute("ROLLBACK")
        checkpointer.stop()
        try writer.run("INSERT INTO filler VALUES (2)", [])
        #expect(Self.fileSize(wal) == limit)
        let frames = try writer.first("PRAGMA wal_checkpoint(PASSIVE)", []) { $0.int64(1) }
        #expect((frames ?? .max) <= 4, "frames in the restarted log: \(String(describing: frames))")
        // Later frames are written over the old ones, within the file.
        for _ in 0..<5 { try writer.run("INSERT INTO filler VALUES (zeroblob(8000))", []) }
        #expect(Self.fileSize(wal) == limit)
        // Nothing was lost: every row is there.
        #expect(try writer.first("SELECT count(*) FROM filler", []) { $0.int64(0) } == 57)
    }

    @Test("past the hard cap the writer truncates the WAL itself, waiting for the readers")
    func walHardCap() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let (writer, reader) = try Self.growingWAL(database)
        defer { writer.close() }
        let wal = database.path + "-wal"
        let grown = Self.fileSize(wal)
        // Under the cap: nothing happens.
        var under = WALLimit(path: wal, bytes: grown + 1)
        under.enforce(on: writer, logger: Logger(label: "test"))
        #expect(Self.fileSize(wal) == grown)
        // Past it: the writer waits for the reader's snapshot to end (200 ms here), then truncates.
        // Handed to the thread that ends its snapshot (its only user from now on).
        nonisolated(unsafe) let held = reader
        let release = Thread {
            Thread.sleep(forTimeInterval: 0.2)
            try? held.execute("ROLLBACK")
            held.close()
        }
        release.start()
        let started = ContinuousClock.now
        var limit = WALLimit(path: wal, bytes: 100_000)
        limit.enforce(on: writer, logger: Logger(label: "test"))
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        #expect(Self.fileSize(wal) == 0)
        #expect(try writer.first("SELECT count(*) FROM filler", []) { $0.int64(0) } == 50)
    }

    @Test("a reader the writer cannot wait out: one attempt, then none until the retry delay")
    func walHardCapBacksOff() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let (filler, reader) = try Self.growingWAL(database)
        defer {
            filler.close()
            reader.close()
        }
        // The writer's wait for the reader: 50 ms, shorter than the reader's snapshot.
        let writer = try database.openConnection(busyTimeoutMilliseconds: 50)
        defer { writer.close() }
        let wal = database.path + "-wal"
        let grown = Self.fileSize(wal)
        var limit = WALLimit(path: wal, bytes: 100_000)
        var started = ContinuousClock.now
        limit.enforce(on: writer, logger: Logger(label: "test"))
        #expect(ContinuousClock.now - started >= .milliseconds(40))
        #expect(Self.fileSize(wal) == grown)
        // The next commits do not wait again (each would wait the whole timeout for nothing).
        started = ContinuousClock.now
        for _ in 0..<5 { limit.enforce(on: writer, logger: Logger(label: "test")) }
        #expect(ContinuousClock.now - started < .milliseconds(40))
        #expect(Self.fileSize(wal) == grown)
    }

    @Test("SQLite counts no memory once a connection opened: no process-wide mutex on every allocation")
    func memoryStatisticsOff() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        #expect(try database.payloadCount(kind: .metric) == 0)
        #expect(!SQLiteLibrary.countsMemory)
    }

    @Test("the door's commits are synced as configured, the fold's are not, whatever came before")
    func foldCommitsUnsynced() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let writer = BatchWriter(connection: try database.openConnection())
        defer { writer.close() }
        func synchronous() throws -> Int64 {
            try writer.connection.first("PRAGMA synchronous") { $0.int64(0) } ?? -1
        }
        #expect(try synchronous() == 2)  // FULL, as opened
        for seed in ["a", "b"] {
            let request = IngestRequest(
                app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: seed)])
            let written = writer.write([request])
            #expect(written.committed)
            #expect(try synchronous() == 2)  // the door's commit was synced
            let folded = try writer.fold(limit: 10)
            #expect(folded.folded == 1)
            #expect(try synchronous() == 1)  // NORMAL: the fold's was not
        }
        #expect(try database.query("SELECT folded_through FROM aggregation_state") == [[.integer(2)]])
    }
}
