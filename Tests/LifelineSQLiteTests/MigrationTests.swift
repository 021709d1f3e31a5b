import Foundation
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("migrations apply in order and are recorded with their checksum")
    func migrationsApplyAndAreRecorded() throws {
        let temp = TemporaryDirectory()
        let database = try Database(path: temp.databasePath)
        let applied = try database.migrate()
        #expect(applied.map(\.version) == EmbeddedMigrations.all.map(\.version))
        let recorded = try database.appliedMigrations()
        #expect(recorded.map(\.name) == EmbeddedMigrations.all.map(\.name))
        #expect(recorded.map(\.checksum) == EmbeddedMigrations.all.map(\.checksum))
        #expect(recorded.allSatisfy { $0.checksum.count == 64 && $0.appliedAt > 1_600_000_000 })
        let tables = try database.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .compactMap { $0.first?.text }
        for table in [
            "apps", "payloads", "payload_raw", "exit_counts", "signposts", "histograms", "scalar_metrics",
            "diagnostics", "diagnostic_frames", "crash_groups", "api_keys", "idempotency_keys", "schema_migrations",
        ] {
            #expect(tables.contains(table), "missing table \(table)")
        }
        #expect(try database.query("PRAGMA journal_mode").first?.first?.text == "wal")
        #expect(try database.query("PRAGMA foreign_keys").first?.first?.integer == 1)
        #expect(try database.query("PRAGMA synchronous").first?.first?.integer == 2)
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("re-opening and migrating again changes nothing")
    func reopenIsIdempotent() throws {
        let temp = TemporaryDirectory()
        do {
            let database = try Database(path: temp.databasePath)
            #expect(try database.migrate().count == EmbeddedMigrations.all.count)
        }
        let database = try Database(path: temp.databasePath, options: Database.Options(synchronous: .normal))
        #expect(try database.migrate().isEmpty)
        #expect(try database.migrate().isEmpty)
        #expect(try database.appliedMigrations().count == EmbeddedMigrations.all.count)
        #expect(try database.query("PRAGMA synchronous").first?.first?.integer == 1)
    }

    @Test("a shipped migration whose checksum changed is refused, naming it")
    func tamperedChecksumIsRefused() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        var changed = EmbeddedMigrations.all
        changed[0].sql += "\n-- edited after shipping\n"
        let error = #expect(throws: StoreError.self) { try database.migrate(changed) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("0001_initial") == true)

        try database.execute("UPDATE schema_migrations SET checksum = '\(String(repeating: "0", count: 64))'")
        let second = #expect(throws: StoreError.self) { try database.migrate() }
        #expect(second?.code == .migration)
        #expect(second?.message.contains("0001_initial") == true)
        #expect(second?.message.contains("checksum") == true)
    }

    @Test("a database migrated by a newer binary is refused")
    func newerDatabaseIsRefused() async throws {
        let temp = TemporaryDirectory()
        let database = try Database(path: temp.databasePath)
        let future = Migration(version: 9_999, name: "future", sql: "CREATE TABLE future (x INTEGER);\n")
        try database.migrate(EmbeddedMigrations.all + [future])
        let error = #expect(throws: StoreError.self) { try database.migrate() }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("newer") == true)
        #expect(throws: StoreError.self) { try IngestWriter(database: database) }
    }

    @Test("the writer refuses a database that is not migrated")
    func writerRequiresMigratedDatabase() throws {
        let temp = TemporaryDirectory()
        let database = try Database(path: temp.databasePath)
        let error = #expect(throws: StoreError.self) { try IngestWriter(database: database) }
        #expect(error?.code == .migration)
    }

    @Test("a failing migration leaves nothing behind")
    func failingMigrationRollsBack() throws {
        let temp = TemporaryDirectory()
        let database = try Database(path: temp.databasePath)
        let broken = Migration(
            version: 9_000, name: "broken", sql: "CREATE TABLE half (x INTEGER); SELECT * FROM nowhere;")
        let error = #expect(throws: StoreError.self) { try database.migrate(EmbeddedMigrations.all + [broken]) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("9000_broken") == true)
        #expect(try database.appliedMigrations().map(\.version) == EmbeddedMigrations.all.map(\.version))
        #expect(try database.query("SELECT name FROM sqlite_schema WHERE name = 'half'").isEmpty)
    }

    @Test("the embedded migrations equal the files in migrations/")
    func embeddedEqualsFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
            .sorted()
        let fromFiles = try files.map { file -> Migration in
            let base = String(file.dropLast(4))
            let parts = base.split(separator: "_", maxSplits: 1)
            let sql = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            return Migration(version: Int(parts[0]) ?? -1, name: String(parts[1]), sql: sql)
        }
        #expect(!fromFiles.isEmpty)
        #expect(
            fromFiles == EmbeddedMigrations.all,
            "Sources/LifelineSQLite/Migrations/EmbeddedMigrations.swift is stale: run scripts/embed-migrations.sh")
        #expect(fromFiles.map(\.identifier) == files.map { String($0.dropLast(4)) })
    }

    @Test("every measurement unit has its row in the units table")
    func unitsTableMatchesModel() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let rows = try database.query("SELECT name FROM units ORDER BY id").compactMap { $0.first?.text }
        #expect(Set(rows) == Set(MeasurementUnit.allCases.map(\.rawValue)))
    }
}
