import Foundation
import LifelineSQLite
import LifelineTestFixtures

extension TemporaryDirectory {
    /// Opens and migrates the database at ``databasePath``.
    ///
    /// A new file with the default page size (the only option fixed when a file is created) starts
    /// as a copy of one migrated empty database made once per test process: migrating runs every
    /// migration in its own transaction, with an fsync each, and hundreds of tests doing that at
    /// once on two cores held Swift's cooperative pool for seconds at a time (servers of other
    /// tests stopped answering). ``MigratedTemplate`` documents why the copy is sound.
    package func openDatabase(_ options: Database.Options = Database.Options()) throws -> Database {
        if options.pageSize == Database.Options().pageSize, !FileManager.default.fileExists(atPath: databasePath),
            let template = MigratedTemplate.files
        {
            for (source, suffix) in template {
                try FileManager.default.copyItem(atPath: source, toPath: databasePath + suffix)
            }
        }
        let database = try Database(path: databasePath, options: options)
        try database.migrate()
        return database
    }
}

/// A migrated, never written again, empty database: its file and its write-ahead log, which a
/// copy opens as SQLite opens any database after a crash (the log's committed frames are
/// replayed; the shared-memory index is rebuilt). `migrate()` on the copy then finds every
/// migration applied and changes nothing.
enum MigratedTemplate {
    /// The template's files and the suffix each is copied to (`""`, `-wal`); `nil` if it could
    /// not be made (each test then migrates its own file).
    static let files: [(String, String)]? = {
        let directory = TemporaryDirectory(prefix: "lifeline-template")
        guard let database = try? Database(path: directory.databasePath), (try? database.migrate()) != nil else {
            return nil
        }
        keep = (directory, database)
        // A static is never deinitialized: the directory goes when the test process exits.
        atexit { MigratedTemplate.keep?.0.remove() }
        return ["", "-wal"].compactMap { suffix in
            let path = directory.databasePath + suffix
            return FileManager.default.fileExists(atPath: path) ? (path, suffix) : nil
        }
    }()

    /// The template's directory and database stay (open, unwritten) for the process: closing the
    /// database would checkpoint and remove the log while a copy may be under way.
    nonisolated(unsafe) private static var keep: (TemporaryDirectory, Database)?
}
