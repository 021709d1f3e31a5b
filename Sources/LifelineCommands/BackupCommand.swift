import ArgumentParser
import Foundation
import LifelineSQLite

/// `lifeline backup`: a consistent copy of a live database.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent, compacted copy of the database (safe while the server runs).",
        discussion: """
            Uses SQLite's VACUUM INTO: the copy is one read transaction, so ingest keeps going while it \
            runs, and the result is a single self-contained file (no -wal). Restore by stopping the \
            server and putting the copy in place of the database file.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Path of the copy to write; must not exist.")
    var out: String

    func validate() throws {
        if FileManager.default.fileExists(atPath: out) {
            throw ValidationError("\(out) already exists; choose a new path")
        }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: global.db) else {
            throw CommandError("no database at \(global.db)")
        }
        let database = try Database(path: global.db)
        let started = ContinuousClock.now
        let quoted = out.replacingOccurrences(of: "'", with: "''")
        try database.execute("VACUUM INTO '\(quoted)'")
        let copy = try Database(path: out)
        let check = try copy.integrityCheck()
        guard check == "ok" else { throw CommandError("the copy failed its integrity check: \(check)") }
        let size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
        print("backup written to \(out) (\(size) bytes, integrity ok) in \(started.duration(to: .now))")
    }
}
