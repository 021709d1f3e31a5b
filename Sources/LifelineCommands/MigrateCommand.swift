import ArgumentParser
import LifelineSQLite

/// `lifeline migrate`: creates or upgrades the database schema.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create the database or apply pending schema migrations, then exit.",
        discussion:
            "Migrations ship inside the binary; each is applied in its own transaction and recorded with a checksum."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        if global.isPostgres {
            let versions = try await global.withPostgres { store in try await store.appliedMigrations() }
            print("\(global.dbDescription): schema at migration \(versions.last ?? 0) (migrations/postgres)")
            return
        }
        let database = try Database(path: global.db)
        defer { database.checkpointForExit() }
        let applied = try database.migrate()
        if applied.isEmpty {
            print("\(global.db): schema up to date")
        } else {
            for migration in applied { print("applied \(String(format: "%04d", migration.version))_\(migration.name)") }
        }
    }
}
