extension Database {
    /// Applies the pending migrations (by default the ones embedded in this binary), each in its
    /// own transaction, and returns the ones applied by this call.
    ///
    /// Throws ``StoreError/Code/migration`` when an applied migration's checksum differs from the
    /// shipped one (naming it), or when the database is newer than this binary.
    @discardableResult
    package func migrate(_ migrations: [Migration] = EmbeddedMigrations.all) throws(StoreError) -> [AppliedMigration] {
        let migrator = Migrator(migrations: migrations, now: { WallClock.nowSeconds() })
        return try withConnection { (connection) throws(StoreError) in try migrator.migrate(connection) }
    }

    /// The migrations recorded in the database, in version order.
    package func appliedMigrations() throws(StoreError) -> [AppliedMigration] {
        try withConnection { (connection) throws(StoreError) in try Migrator.applied(on: connection) }
    }
}
