import LifelineSQLite
import LifelineTestFixtures

extension TemporaryDirectory {
    /// Opens and migrates the database at ``databasePath``.
    package func openDatabase(_ options: Database.Options = Database.Options()) throws -> Database {
        let database = try Database(path: databasePath, options: options)
        try database.migrate()
        return database
    }
}
