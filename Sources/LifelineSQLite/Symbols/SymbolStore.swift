import Foundation
import LifelineStorage

/// ``SymbolStore`` over a SQLite ``Database``: each call on a store thread.
package struct SQLiteSymbolStore: SymbolStore {
    package let database: Database

    package init(database: Database) {
        self.database = database
    }

    package var symbolWorkDirectory: URL { database.symbolDirectory }

    package func importSymbols(
        app: String, files: [(file: URL, binaryName: String)], now: Int64
    ) async throws -> [(symbols: DebugSymbols, imported: Bool)] {
        try await database.onStoreThread { database in
            var results: [(symbols: DebugSymbols, imported: Bool)] = []
            for item in files {
                results += try database.importSymbols(app: app, file: item.file, binaryName: item.binaryName, now: now)
            }
            return results
        }
    }

    package func debugSymbols(app: String) async throws -> [DebugSymbols] {
        try await database.onStoreThread { try $0.debugSymbols(app: app) }
    }

    package func deleteSymbols(app: String, uuid: String) async throws -> Bool {
        try await database.onStoreThread { try $0.deleteSymbols(app: app, uuid: uuid) }
    }
}

extension Database {
    /// This database as a ``SymbolStore``.
    package var symbolStore: SQLiteSymbolStore { SQLiteSymbolStore(database: self) }
}
