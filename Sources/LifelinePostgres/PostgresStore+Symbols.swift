import Foundation
import LifelineAnalysis
import LifelineModel
import LifelineStorage
import NIOCore
import NIOPosix
import PostgresNIO

/// Debug symbols on PostgreSQL (migration `postgres/0006`): the slice rows and their bytes in
/// chunks (``PostgresStore/symbolChunkBytes``, 8 MiB), so any node can symbolicate. A node copies a slice to its
/// ``PostgresStore/symbolCache`` the first time a frame needs it (`llvm-symbolizer` reads files);
/// the cache holds at most one copy of each slice in the database, and a slice deleted from the
/// database stops being used at once (its row is looked up first). A slice that crashes or times out
/// the symbolizer is marked unusable in its row (every node then skips it); importing its UUID
/// again replaces it and clears the mark.
extension PostgresStore: SymbolStore {
    package var symbolWorkDirectory: URL { symbolCache }

    package func importSymbols(
        app: String, files: [(file: URL, binaryName: String)], now: Int64
    ) async throws -> [(symbols: DebugSymbols, imported: Bool)] {
        var results: [(symbols: DebugSymbols, imported: Bool)] = []
        for item in files {
            // File work (a mapped file's pages are read from disk) on NIO's blocking pool.
            let (data, read) = try await NIOThreadPool.singleton.runIfActive {
                () throws -> (Data, Result<[MachOSlice], StoreError>) in
                let data: Data
                do {
                    data = try Data(contentsOf: item.file, options: .alwaysMapped)
                } catch {
                    throw StoreError(.invalid, "cannot read \(item.file.path): \(error.localizedDescription)")
                }
                let read = data.withUnsafeBytes { bytes in
                    Result { () throws(StoreError) -> [MachOSlice] in try MachOSlices.read(bytes) }
                }
                return (data, read)
            }
            let binaryName = String(item.binaryName.prefix(255))
            for slice in try read.get() {
                let symbols = DebugSymbols(
                    uuid: slice.uuid, app: app, arch: slice.arch,
                    binaryName: binaryName.isEmpty ? "binary" : binaryName, textVMAddress: slice.textVMAddress,
                    size: slice.size, uploadedAt: now)
                if try await insert(symbols, bytes: data, from: slice.offset) {
                    results.append((symbols, true))
                } else if let existing = try await debugSymbols(uuid: slice.uuid) {
                    results.append((existing, false))
                }
            }
        }
        return results
    }

    /// Records one slice and its bytes in one transaction; false when its UUID is there already
    /// (a concurrent import of the same UUID waits for the first and finds it). A slice marked
    /// unusable is replaced (its row and chunks deleted first, its upload time moved on: a new version).
    private func insert(_ symbols: DebugSymbols, bytes data: Data, from offset: Int) async throws -> Bool {
        let logger = self.logger
        let chunkBytes = symbolChunkBytes
        let vmaddr = Int64(bitPattern: symbols.textVMAddress)
        let size = Int64(symbols.size)
        let inserted = try await client.withTransaction(logger: logger) { connection in
            let replaced = try await connection.query(
                """
                DELETE FROM debug_symbols WHERE uuid = \(symbols.uuid) AND unusable_reason IS NOT NULL
                RETURNING uploaded_at
                """, logger: logger
            ).collect().first.map { try $0.decode(Int64.self) }
            let uploadedAt = max(symbols.uploadedAt, (replaced ?? symbols.uploadedAt - 1) + 1)
            let inserted = try await connection.query(
                """
                INSERT INTO debug_symbols (uuid, app, arch, binary_name, text_vmaddr, size, uploaded_at)
                VALUES (\(symbols.uuid), \(symbols.app), \(symbols.arch), \(symbols.binaryName), \(vmaddr), \(size),
                    \(uploadedAt))
                ON CONFLICT (uuid) DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { return false }
            var start = offset
            var index: Int32 = 0
            let end = offset + symbols.size
            while start < end {
                let stop = min(end, start + chunkBytes)
                let range = start..<stop
                let chunk = try await NIOThreadPool.singleton.runIfActive { ByteBuffer(bytes: data[range]) }
                try await connection.query(
                    "INSERT INTO debug_symbol_chunks (uuid, n, bytes) VALUES (\(symbols.uuid), \(index), \(chunk))",
                    logger: logger)
                start = stop
                index += 1
            }
            return true
        }
        if inserted {
            // This node's copy (and the symbolizer's open file) belong to the replaced version.
            try? FileManager.default.removeItem(at: symbolCache.appendingPathComponent(symbols.uuid))
        }
        return inserted
    }

    /// The slice of `uuid` (any case), if recorded.
    package func debugSymbols(uuid: String) async throws -> DebugSymbols? {
        let upper = uuid.uppercased()
        return try await client.query(
            "SELECT \(unescaped: Self.symbolColumns) FROM debug_symbols WHERE uuid = \(upper)", logger: logger
        ).collect().first.map(Self.symbols)
    }

    package func debugSymbols(app: String) async throws -> [DebugSymbols] {
        try await client.query(
            """
            SELECT \(unescaped: Self.symbolColumns) FROM debug_symbols WHERE app = \(app)
            ORDER BY uploaded_at DESC, uuid
            """, logger: logger
        ).collect().map(Self.symbols)
    }

    package func deleteSymbols(app: String, uuid: String) async throws -> Bool {
        let upper = uuid.uppercased()
        let removed = try await client.query(
            "DELETE FROM debug_symbols WHERE uuid = \(upper) AND app = \(app) RETURNING 1", logger: logger
        ).collect()
        guard !removed.isEmpty else { return false }
        try? FileManager.default.removeItem(at: symbolCache.appendingPathComponent(upper))
        return true
    }

    static let symbolColumns =
        "uuid, app, arch, binary_name, text_vmaddr, size, uploaded_at, unusable_reason, unusable_at"

    static func symbols(_ row: PostgresRow) throws -> DebugSymbols {
        let (uuid, app, arch, name, vmaddr, size, uploaded, reason, markedAt) = try row.decode(
            (String, String, String, String, Int64, Int64, Int64, String?, Int64?).self)
        return DebugSymbols(
            uuid: uuid, app: app, arch: arch, binaryName: name, textVMAddress: UInt64(bitPattern: vmaddr),
            size: Int(size), uploadedAt: uploaded, unusable: UnusableSymbols(reason: reason, at: markedAt))
    }
}

extension PostgresReader {
    /// `frames` and `title` symbolicated (see ``Symbolication/symbolicate(_:symbolicator:slice:)``):
    /// the slices first (queries and cache files), then the symbolizer's process I/O on NIO's
    /// blocking pool, never on the cooperative pool. Slices found unusable are recorded
    /// (``recordUnusable(_:)``).
    func symbolicate(
        _ frames: [SampleFrame], title: String, with symbols: (cache: URL, symbolicator: Symbolicator)
    ) async throws -> ([SampleFrame], String) {
        var slices: [String: (symbols: DebugSymbols, file: String)] = [:]
        for uuid in Set(frames.compactMap { $0.binaryUUID?.uppercased() }) {
            slices[uuid] = try await symbolFile(uuid: uuid, cache: symbols.cache)
        }
        let found = slices
        let (symbolicated, failures) = try await NIOThreadPool.singleton.runIfActive {
            Symbolication.symbolicate(frames, symbolicator: symbols.symbolicator) { uuid in found[uuid] }
        }
        if !failures.isEmpty { try await recordUnusable(failures) }
        return (symbolicated, Symbolication.title(title, frames: symbolicated))
    }

    /// Logs each failure and marks its slice unusable, once (a mark already there is kept; a slice
    /// re-uploaded since is not marked). This reader's transaction is read-only: it is committed
    /// (nothing was written), the marks are written on their own, and a new read-only snapshot
    /// begins; the read's later queries see the marks. Once per failing file in the whole cluster.
    func recordUnusable(_ failures: [Symbolication.Failure]) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        for failure in failures {
            logger.warning(
                "symbol file unusable: frames of this binary stay unsymbolicated",
                metadata: [
                    "uuid": "\(failure.symbols.uuid)", "app": "\(failure.symbols.app)",
                    "binary": "\(failure.symbols.binaryName)", "reason": "\(failure.reason.rawValue)",
                ])
        }
        try await connection.query("COMMIT", logger: logger)
        do {
            for failure in failures {
                let (uuid, uploadedAt, reason) = (
                    failure.symbols.uuid, failure.symbols.uploadedAt, failure.reason.rawValue
                )
                try await connection.query(
                    """
                    UPDATE debug_symbols SET unusable_reason = \(reason), unusable_at = \(now)
                    WHERE uuid = \(uuid) AND uploaded_at = \(uploadedAt) AND unusable_reason IS NULL
                    """, logger: logger)
            }
        } catch {
            logger.error("cannot mark symbol files unusable", metadata: ["error": "\(String(reflecting: error))"])
        }
        try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
    }

    /// The recorded slice of `uuid` (upper case) and the path of this node's copy, copied from
    /// the database chunk by chunk on first use (to a temporary name, then renamed: a concurrent
    /// reader never sees half a file); nil when the slice is not recorded or its bytes are
    /// incomplete. A slice marked unusable is returned as it is, not copied. A copy older than the
    /// slice's upload (its UUID was re-uploaded) is copied again. File writes run on NIO's blocking pool.
    func symbolFile(uuid: String, cache: URL) async throws -> (symbols: DebugSymbols, file: String)? {
        var binds = PostgresBindings()
        binds.append(uuid)
        guard
            let symbols = try await rows(
                "SELECT \(PostgresStore.symbolColumns) FROM debug_symbols WHERE uuid = $1", binds
            ).first.map(PostgresStore.symbols)
        else { return nil }
        let target = cache.appendingPathComponent(symbols.uuid)
        if symbols.unusable != nil { return (symbols, target.path) }
        if let attributes = try? FileManager.default.attributesOfItem(atPath: target.path),
            attributes[.size] as? Int == symbols.size,
            let modified = attributes[.modificationDate] as? Date,
            Int64(modified.timeIntervalSince1970) >= symbols.uploadedAt
        {
            return (symbols, target.path)
        }
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let temporary = cache.appendingPathComponent("\(symbols.uuid).\(UUID().uuidString).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else { return nil }
        defer { try? FileManager.default.removeItem(at: temporary) }
        let handle = try FileHandle(forWritingTo: temporary)
        var written = 0
        do {
            for index in 0... {
                var chunkBinds = PostgresBindings()
                chunkBinds.append(uuid)
                chunkBinds.append(Int32(index))
                guard
                    let row = try await rows(
                        "SELECT bytes FROM debug_symbol_chunks WHERE uuid = $1 AND n = $2", chunkBinds
                    ).first
                else { break }
                let bytes = try row.decode(ByteBuffer.self)
                written += bytes.readableBytes
                guard written <= symbols.size else { break }
                try await NIOThreadPool.singleton.runIfActive {
                    try handle.write(contentsOf: Data(bytes.readableBytesView))
                }
            }
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard written == symbols.size else { return nil }
        _ = try? FileManager.default.removeItem(at: target)
        try FileManager.default.moveItem(at: temporary, to: target)
        return (symbols, target.path)
    }
}
