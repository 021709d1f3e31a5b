import LifelineModel
import LifelineStorage

extension Database {
    /// Applies the pending migrations (by default the ones embedded in this binary), each in its
    /// own transaction, and returns the ones applied by this call.
    ///
    /// Throws ``StoreError/Code/migration`` when an applied migration's checksum differs from the
    /// shipped one (naming it), or when the database is newer than this binary.
    @discardableResult
    package func migrate(_ migrations: [Migration] = EmbeddedMigrations.all) throws(StoreError) -> [AppliedMigration] {
        let migrator = Migrator(migrations: migrations, now: { WallClock.nowSeconds() }) {
            (migration, connection) throws(StoreError) in
            // Rollups are (re)built from the normalized rows by the last migration that changes
            // their tables (0004 packs them), so a database filled before they existed, or holding
            // 0002's unpacked rows, gets them in the layout this binary reads.
            if migration.version == 7, migration.name == "reports_v2" {
                try Self.editCheck(
                    table: "diagnostics", replacing: "'app_launch'))", with: "'app_launch', 'memory_exception'))",
                    on: connection)
                return
            }
            if migration.version == 9, migration.name == "symbols_role" {
                try Self.editCheck(
                    table: "api_keys", replacing: "'read', 'admin'))", with: "'read', 'admin', 'symbols'))",
                    on: connection)
                return
            }
            let hasPayloads = { () throws(StoreError) -> Bool in
                try connection.first("SELECT 1 FROM payloads LIMIT 1", []) { $0.int64(0) } != nil
            }
            if migration.version == 4, migration.name == "packed_rollups", try hasPayloads() {
                try RollupRebuilder.rebuild(on: connection)
            }
            if migration.version == 12, migration.name == "aggregator", try hasPayloads() {
                try RollupRebuilder.rebuildBuckets(on: connection)
            }
            if migration.version == 21, migration.name == "bucket_cells" {
                try RollupRebuilder.packFineBuckets(on: connection)
            }
            if migration.version == 27, migration.name == "state_exits_packed" {
                try StateRowsStage.packStoredExits(on: connection)
            }
            if migration.version == 30, migration.name == "state_histograms_packed" {
                try StateRowsStage.packStoredHistograms(on: connection)
            }
        }
        return try withConnection { (connection) throws(StoreError) in try migrator.migrate(connection) }
    }

    /// The migrations recorded in the database, in version order.
    package func appliedMigrations() throws(StoreError) -> [AppliedMigration] {
        try withConnection { (connection) throws(StoreError) in try Migrator.applied(on: connection) }
    }

    /// Recomputes every figure from the raw documents, in one transaction: ``refold(app:from:progress:)``
    /// for every app and day. Blocks writers while it runs.
    package func rebuildRollups() throws(StoreError) {
        _ = try refold()
    }
}

extension Database {
    /// Widens a CHECK constraint of `table` (`replacing` → `with` in its SQL), inside the
    /// migration's transaction. SQLite cannot alter a CHECK; this is its documented procedure for a
    /// change that does not touch the stored format and that existing rows satisfy
    /// (sqlite.org/lang_altertable.html, "making other kinds of table schema changes"): edit the
    /// table's SQL in `sqlite_schema` and bump the schema version so every connection reloads it.
    /// The table is not copied.
    static func editCheck(table: String, replacing: String, with replacement: String, on connection: Connection)
        throws(StoreError)
    {
        let version = try connection.first("PRAGMA schema_version") { $0.int64(0) } ?? 0
        try connection.execute("PRAGMA writable_schema = ON")
        do throws(StoreError) {
            try connection.run(
                "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND name = ?3 AND instr(sql, ?2) = 0",
                [.text(replacing), .text(replacement), .text(table)])
            try connection.execute("PRAGMA schema_version = \(version + 1)")
            try connection.execute("PRAGMA writable_schema = OFF")
        } catch {
            try? connection.execute("PRAGMA writable_schema = OFF")
            throw error
        }
        let sql = try connection.first(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1", [.text(table)]
        ) { $0.text(0) }
        guard let sql, sql.contains(replacement) else {
            throw StoreError(.migration, "could not widen the CHECK of \(table) to \(replacement)")
        }
    }
}
