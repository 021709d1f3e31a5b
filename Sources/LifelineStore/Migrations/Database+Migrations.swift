import LifelineModel

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
            guard migration.version == 4, migration.name == "packed_rollups" else { return }
            let hasPayloads = try connection.first("SELECT 1 FROM payloads LIMIT 1", []) { $0.int64(0) } != nil
            if hasPayloads { try RollupRebuilder.rebuild(on: connection) }
        }
        return try withConnection { (connection) throws(StoreError) in try migrator.migrate(connection) }
    }

    /// The migrations recorded in the database, in version order.
    package func appliedMigrations() throws(StoreError) -> [AppliedMigration] {
        try withConnection { (connection) throws(StoreError) in try Migrator.applied(on: connection) }
    }

    /// Recomputes every rollup table from the normalized rows, in one transaction (for databases
    /// filled before migration 0002, or to re-derive them). Blocks writers while it runs.
    package func rebuildRollups() throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in try RollupRebuilder.rebuild(on: connection) }
        }
    }
}
