import LifelineStorage

/// Applies ``Migration``s to a connection and checks the ones already applied.
struct Migrator {
    let migrations: [Migration]
    let now: () -> Int64
    /// Runs after a migration's SQL, in its transaction (data backfills).
    var afterApply: (Migration, Connection) throws(StoreError) -> Void = { _, _ in }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY CHECK (version > 0),
            name TEXT NOT NULL,
            checksum TEXT NOT NULL CHECK (length(checksum) = 64),
            applied_at INTEGER NOT NULL
        )
        """

    /// Validates the list itself: versions positive, unique and increasing.
    func validateList() throws(StoreError) {
        var previous = 0
        for migration in migrations {
            guard migration.version > previous else {
                throw StoreError(
                    .migration, "migration \(migration.identifier) is out of order or duplicated")
            }
            previous = migration.version
        }
    }

    /// The migrations recorded in the database, by version.
    static func applied(on connection: Connection) throws(StoreError) -> [AppliedMigration] {
        let exists = try connection.first(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'"
        ) { $0.int64(0) }
        guard exists != nil else { return [] }
        return try connection.query(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version"
        ) {
            AppliedMigration(version: Int($0.int64(0)), name: $0.text(1), checksum: $0.text(2), appliedAt: $0.int64(3))
        }
    }

    /// Checks the recorded migrations against the known ones: same name and checksum, none unknown.
    func check(_ applied: [AppliedMigration]) throws(StoreError) {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        let latest = migrations.last?.version ?? 0
        for record in applied {
            guard let migration = known[record.version] else {
                if record.version > latest {
                    throw StoreError(
                        .migration,
                        "the database schema (migration \(record.version) \(record.name)) is newer than this binary"
                            + " (latest \(latest)); upgrade lifeline")
                }
                throw StoreError(
                    .migration, "the database has migration \(record.version) \(record.name), unknown to this binary")
            }
            guard migration.name == record.name, migration.checksum == record.checksum else {
                throw StoreError(
                    .migration,
                    "migration \(migration.identifier) was changed after it was applied (checksum mismatch)",
                    cause: "recorded \(record.name) \(record.checksum), shipped \(migration.checksum)")
            }
        }
    }

    /// Applies every pending migration, each in its own transaction; returns those applied now.
    func migrate(_ connection: Connection) throws(StoreError) -> [AppliedMigration] {
        try validateList()
        try connection.execute(Self.createTable)
        try check(Self.applied(on: connection))
        var done: [AppliedMigration] = []
        for migration in migrations {
            // Only outside a transaction does this pragma take effect.
            if migration.turnsForeignKeysOff { try connection.execute("PRAGMA foreign_keys = OFF") }
            defer { if migration.turnsForeignKeysOff { try? connection.execute("PRAGMA foreign_keys = ON") } }
            let record = try connection.transaction { () throws(StoreError) -> AppliedMigration? in
                // Re-read inside the write lock: another process may have migrated meanwhile.
                let current = try Self.applied(on: connection)
                try check(current)
                guard !current.contains(where: { $0.version == migration.version }) else { return nil }
                do throws(StoreError) {
                    try connection.execute(migration.sql)
                } catch {
                    var error = error
                    if error.code != .unavailable {
                        error.code = .migration
                        error.message = "migration \(migration.identifier) failed"
                    }
                    throw error
                }
                try afterApply(migration, connection)
                if migration.turnsForeignKeysOff {
                    let broken = try connection.query("PRAGMA foreign_key_check") { $0.text(0) }
                    if let table = broken.first {
                        throw StoreError(
                            .migration, "migration \(migration.identifier) failed",
                            cause: "\(broken.count) rows of \(table) reference a missing row")
                    }
                }
                let record = AppliedMigration(
                    version: migration.version, name: migration.name, checksum: migration.checksum, appliedAt: now())
                try connection.run(
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                    [
                        .integer(Int64(record.version)), .text(record.name), .text(record.checksum),
                        .integer(record.appliedAt),
                    ]
                )
                return record
            }
            if let record { done.append(record) }
        }
        return done
    }

    /// Throws unless every known migration is applied and matches (used before writing).
    func requireCurrent(_ connection: Connection) throws(StoreError) {
        let applied = try Self.applied(on: connection)
        try check(applied)
        guard applied.count == migrations.count else {
            throw StoreError(.migration, "the database is not migrated; run `lifeline migrate`")
        }
    }
}
