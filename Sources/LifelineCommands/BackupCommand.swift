import ArgumentParser
import Foundation
import LifelineSQLite

/// `lifeline backup`: a consistent copy of a live database and of its debug-symbol files.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the database and its dSYM files (safe while the server runs).",
        discussion: """
            Uses SQLite's VACUUM INTO: the copy is one read transaction, so ingest keeps going while it \
            runs, and the result is a single self-contained file (no -wal). Then every debug-symbol \
            file the copy lists is copied to OUT.symbols/ (the files are immutable, named by UUID, and \
            written before their row, so each row of the copy has its file). Restore: stop the server, \
            put OUT in place of the database file and OUT.symbols/ in place of its symbol directory \
            (DB.symbols/, or symbols.directory of the config file), start the server.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Path of the copy to write; must not exist (the symbol files go to OUT.symbols/).")
    var out: String

    @Option(help: "YAML config file, for symbols.directory (default: DB.symbols/ beside the database).")
    var config: String?

    func validate() throws {
        if FileManager.default.fileExists(atPath: out) {
            throw ValidationError("\(out) already exists; choose a new path")
        }
        if FileManager.default.fileExists(atPath: out + ".symbols") {
            throw ValidationError("\(out).symbols already exists; choose a new path")
        }
        if global.isPostgres {
            throw ValidationError(
                "backup copies a SQLite file; for PostgreSQL use pg_dump (README: PostgreSQL, backup and restore)")
        }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: global.db) else {
            throw CommandError("no database at \(global.db)")
        }
        let options = try config.map(ConfigFile.load)?.databaseOptions() ?? .init()
        let database = try Database(path: global.db, options: options)
        defer { database.checkpointForExit() }
        let started = ContinuousClock.now
        let quoted = out.replacingOccurrences(of: "'", with: "''")
        try database.execute("VACUUM INTO '\(quoted)'")
        let copy = try Database(path: out)
        defer { copy.checkpointForExit() }
        let check = try copy.integrityCheck()
        guard check == "ok" else { throw CommandError("the copy failed its integrity check: \(check)") }
        let symbols = try copySymbols(listedIn: copy, from: database.symbolDirectory)
        let size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
        print(
            "backup written to \(out) (\(size) bytes, integrity ok) and \(symbols.files) symbol file(s) "
                + "(\(symbols.bytes) bytes) to \(out).symbols in \(started.duration(to: .now))")
    }

    /// Copies the symbol file of every slice `copy` lists from `directory` to `OUT.symbols/`.
    private func copySymbols(listedIn copy: Database, from directory: URL) throws -> (files: Int, bytes: Int) {
        let uuids = try copy.query("SELECT uuid FROM debug_symbols ORDER BY uuid").compactMap { $0.first?.text }
        let target = URL(fileURLWithPath: out + ".symbols", isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        var bytes = 0
        for uuid in uuids {
            let source = directory.appendingPathComponent(uuid)
            guard FileManager.default.fileExists(atPath: source.path) else {
                throw CommandError(
                    "the symbol file of \(uuid) is missing from \(directory.path); the backup is incomplete")
            }
            try FileManager.default.copyItem(at: source, to: target.appendingPathComponent(uuid))
            bytes += (try? FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int) ?? 0
        }
        return (uuids.count, bytes)
    }
}
