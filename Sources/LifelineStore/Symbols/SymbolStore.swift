import Foundation

/// Where debug symbols are kept, for the upload endpoint and `lifeline dsym`: the SQLite store
/// (rows in the database, one file per slice beside it) or the PostgreSQL store (rows and the
/// slices' bytes in the database, a local cache on each node). Each store module implements it.
package protocol SymbolStore: Sendable {
    /// A local directory for uploads and extracted zip entries (temporary files, removed after).
    var symbolWorkDirectory: URL { get }
    /// Imports the slices of DWARF files (thin or fat Mach-O) for `app`; a UUID already imported
    /// is left as is (`imported` false).
    func importSymbols(
        app: String, files: [(file: URL, binaryName: String)], now: Int64
    ) async throws -> [(symbols: DebugSymbols, imported: Bool)]
    /// Every recorded slice of `app`, newest first.
    func debugSymbols(app: String) async throws -> [DebugSymbols]
    /// Deletes the slice `uuid` of `app`; false when the app has no such slice.
    func deleteSymbols(app: String, uuid: String) async throws -> Bool
}

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
        try await database.write { database in
            var results: [(symbols: DebugSymbols, imported: Bool)] = []
            for item in files {
                results += try database.importSymbols(app: app, file: item.file, binaryName: item.binaryName, now: now)
            }
            return results
        }
    }

    package func debugSymbols(app: String) async throws -> [DebugSymbols] {
        try await database.write { try $0.debugSymbols(app: app) }
    }

    package func deleteSymbols(app: String, uuid: String) async throws -> Bool {
        try await database.write { try $0.deleteSymbols(app: app, uuid: uuid) }
    }
}

extension Database {
    /// This database as a ``SymbolStore``.
    package var symbolStore: SQLiteSymbolStore { SQLiteSymbolStore(database: self) }
}
