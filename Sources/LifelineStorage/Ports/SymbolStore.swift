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
