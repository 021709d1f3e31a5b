import Foundation
import LifelineModel
import LifelineStorage

extension Database {
    /// The directory of the symbol files (``Options/symbolDirectory``, by default `<database>.symbols/`):
    /// one thin Mach-O per slice, named by its UUID.
    package var symbolDirectory: URL {
        URL(fileURLWithPath: options.symbolDirectory ?? (path + ".symbols"), isDirectory: true)
    }

    /// Imports the slices of one DWARF file for `app`: each is copied to the symbol directory under
    /// its UUID and recorded. A UUID already imported is left as is (`imported` false), unless it
    /// was marked unusable: then the file is replaced and the mark cleared (a new version).
    /// `binaryName` defaults to the file's name.
    package func importSymbols(app: String, file: URL, binaryName: String? = nil, now: Int64) throws(StoreError) -> [(
        symbols: DebugSymbols, imported: Bool
    )] {
        let data: Data
        do {
            data = try Data(contentsOf: file, options: .alwaysMapped)
        } catch {
            throw StoreError(.invalid, "cannot read \(file.path): \(error.localizedDescription)")
        }
        let read = data.withUnsafeBytes { bytes in
            Result { () throws(StoreError) -> [MachOSlice] in try MachOSlices.read(bytes) }
        }
        let slices = try read.get()
        let binaryName = String((binaryName ?? file.lastPathComponent).prefix(255))
        do {
            try FileManager.default.createDirectory(at: symbolDirectory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.unavailable, "cannot create \(symbolDirectory.path)", cause: "\(error)")
        }
        var results: [(symbols: DebugSymbols, imported: Bool)] = []
        for slice in slices {
            let symbols = DebugSymbols(
                uuid: slice.uuid, app: app, arch: slice.arch, binaryName: binaryName.isEmpty ? "binary" : binaryName,
                textVMAddress: slice.textVMAddress, size: slice.size, uploadedAt: now)
            if let existing = try debugSymbols(uuid: slice.uuid), existing.unusable == nil,
                FileManager.default.fileExists(atPath: symbolFile(uuid: slice.uuid).path)
            {
                results.append((existing, false))
                continue
            }
            // Write the slice beside its final name, then rename: a reader never sees half a file.
            let target = symbolFile(uuid: slice.uuid)
            let temporary = target.appendingPathExtension("partial")
            do {
                try data.subdata(in: slice.offset..<(slice.offset + slice.size)).write(to: temporary)
                _ = try? FileManager.default.removeItem(at: target)
                try FileManager.default.moveItem(at: temporary, to: target)
            } catch {
                throw StoreError(.unavailable, "cannot write \(target.path)", cause: "\(error)")
            }
            _ = try withConnection { (connection) throws(StoreError) -> Int in
                try connection.run(
                    """
                    INSERT INTO debug_symbols (uuid, app, arch, binary_name, text_vmaddr, size, uploaded_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT (uuid) DO UPDATE SET app = excluded.app, arch = excluded.arch,
                        binary_name = excluded.binary_name, text_vmaddr = excluded.text_vmaddr, size = excluded.size,
                        uploaded_at = max(excluded.uploaded_at, debug_symbols.uploaded_at + 1), unusable_reason = NULL,
                        unusable_at = NULL
                    """,
                    [
                        .text(symbols.uuid), .text(app), .text(symbols.arch), .text(symbols.binaryName),
                        .integer(Int64(bitPattern: symbols.textVMAddress)), .integer(Int64(symbols.size)),
                        .integer(now),
                    ])
            }
            results.append((symbols, true))
        }
        return results
    }

    /// The symbols recorded for `uuid` (any case), if any.
    package func debugSymbols(uuid: String) throws(StoreError) -> DebugSymbols? {
        try withConnection { (connection) throws(StoreError) -> DebugSymbols? in
            try Self.debugSymbols(uuid: uuid, on: connection)
        }
    }

    /// Every recorded slice of `app`, newest first.
    package func debugSymbols(app: String) throws(StoreError) -> [DebugSymbols] {
        try withConnection { (connection) throws(StoreError) -> [DebugSymbols] in
            try connection.query(
                """
                SELECT \(Self.symbolColumns) FROM debug_symbols WHERE app = ?1 ORDER BY uploaded_at DESC, uuid
                """, [.text(app)], Self.symbols)
        }
    }

    static func debugSymbols(uuid: String, on connection: Connection) throws(StoreError) -> DebugSymbols? {
        try connection.first(
            "SELECT \(symbolColumns) FROM debug_symbols WHERE uuid = ?1",
            [.text(uuid.uppercased())], symbols)
    }

    static let symbolColumns =
        "uuid, app, arch, binary_name, text_vmaddr, size, uploaded_at, unusable_reason, unusable_at"

    private static func symbols(_ row: Statement) -> DebugSymbols {
        DebugSymbols(
            uuid: row.text(0), app: row.text(1), arch: row.text(2), binaryName: row.text(3),
            textVMAddress: UInt64(bitPattern: row.int64(4)), size: Int(row.int64(5)), uploadedAt: row.int64(6),
            unusable: UnusableSymbols(reason: row.optionalText(7), at: row.optionalInt64(8)))
    }

    /// Marks the slice `uuid` unusable (once: a mark already there is kept); false when it was
    /// already marked or is gone, or when `uploadedAt` is not its version any more (re-uploaded).
    static func markUnusable(
        uuid: String, uploadedAt: Int64, reason: SymbolFileFailure, at now: Int64, on connection: Connection
    ) throws(StoreError) -> Bool {
        try connection.run(
            """
            UPDATE debug_symbols SET unusable_reason = ?1, unusable_at = ?2
            WHERE uuid = ?3 AND uploaded_at = ?4 AND unusable_reason IS NULL
            """, [.text(reason.rawValue), .integer(now), .text(uuid.uppercased()), .integer(uploadedAt)]) > 0
    }

    /// Deletes the slice `uuid` of `app`: its row, then its file. False when the app has no such slice.
    package func deleteSymbols(app: String, uuid: String) throws(StoreError) -> Bool {
        let removed = try withConnection { (connection) throws(StoreError) -> Int in
            try connection.run(
                "DELETE FROM debug_symbols WHERE uuid = ?1 AND app = ?2", [.text(uuid.uppercased()), .text(app)])
        }
        guard removed > 0 else { return false }
        try? FileManager.default.removeItem(at: symbolFile(uuid: uuid))
        return true
    }

    /// The symbol file of `uuid`.
    func symbolFile(uuid: String) -> URL {
        symbolDirectory.appendingPathComponent(uuid.uppercased())
    }
}
