import ArgumentParser
import Foundation
import LifelinePostgres
import LifelineSQLite
import LifelineStorage
import Logging

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: """
            Path of the SQLite database file (created if missing), or a PostgreSQL URL \
            (postgres://user@host:5432/db?sslmode=require; password from the URL, password_file= or PGPASSWORD).
            """)
    var db: String = GlobalOptions.defaultDatabasePath

    static let defaultDatabasePath = "./lifeline.sqlite"

    /// Whether `--db` names a PostgreSQL database.
    var isPostgres: Bool { PostgresLocation.isURL(db) }

    /// `--db` for messages (a PostgreSQL URL without its password).
    var dbDescription: String {
        guard isPostgres else { return db }
        return (try? PostgresLocation(db).description) ?? "postgres://…"
    }

    /// The PostgreSQL store of `--db`, migrated; the caller shuts it down. `options` (of the
    /// config file) give the symbol cache directory and symbolizer.
    func openPostgres(logger: Logger, options: Database.Options = .init()) async throws -> PostgresStore {
        let store: PostgresStore
        do {
            store = try PostgresStore(
                url: db, logger: logger, symbolCache: options.symbolDirectory.map { URL(fileURLWithPath: $0) },
                symbolicator: options.makeSymbolicator())
        } catch {
            throw CommandError("\(error)")
        }
        do {
            try await store.migrate()
        } catch {
            await store.shutdown()
            throw CommandError("cannot migrate \(dbDescription): \(String(reflecting: error))")
        }
        return store
    }

    /// Runs `body` with the PostgreSQL store of `--db` (migrated), shut down afterwards whatever
    /// `body` does.
    func withPostgres<T>(
        options: Database.Options = .init(), _ body: (PostgresStore) async throws -> T
    ) async throws -> T {
        let store = try await openPostgres(logger: makeLogger(), options: options)
        do {
            let result = try await body(store)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// Runs `body` with the SQLite file of `--db`, which must exist, migrated, with the documents a
    /// stopped server acknowledged and did not fold folded first (said on standard error unless
    /// `quiet`); its WAL checkpointed afterwards.
    func withFoldedSQLite<T>(quiet: Bool, _ body: (Database) throws -> T) throws -> T {
        guard FileManager.default.fileExists(atPath: db) else {
            throw CommandError("no database at \(db)")
        }
        let database = try Database(path: db)
        defer { database.checkpointForExit() }
        try database.migrate()
        let pending = try database.foldPending()
        if pending > 0 && !quiet { printError("folded \(pending) documents acknowledged before the last stop") }
        return try body(database)
    }

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: "Log format: text (human) or json (one object per line).")
    var logFormat: LogFormat = .text

    /// A logger writing to standard error in the chosen format and level.
    func makeLogger(label: String = "lifeline") -> Logger {
        let format = logFormat
        let level = logLevel
        return Logger(label: label) { label in
            var handler: any LogHandler =
                switch format {
                case .text: StreamLogHandler.standardError(label: label)
                case .json: JSONLogHandler(label: label)
                }
            handler.logLevel = level
            return handler
        }
    }
}

/// How log lines are written.
enum LogFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text
    case json
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Prints to standard error (progress and diagnostics; standard output stays for results).
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
