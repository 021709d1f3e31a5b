import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel
import LifelineStorage
import NIOPosix

/// `POST /v1/apps/{bundleId}/dsyms` (the app's symbols key, or admin): a zip of `.dSYM` bundles or one
/// DWARF / Mach-O file (a dSYM's `Contents/Resources/DWARF/<name>`, thin or fat) streamed to disk,
/// never whole in memory, then imported like `lifeline dsym import`; `GET` (read key) lists the
/// app's symbols or the binaries missing them; `DELETE …/dsyms/{uuid}` removes one slice.
struct SymbolsController: Sendable {
    let symbols: any SymbolStore
    /// Where the binaries missing symbols are read.
    let source: any AggregateSource
    /// Largest upload accepted.
    var maxBytes = 1 << 30
    /// Bounds on what a zip may expand to.
    var archiveLimits = SymbolArchiveLimits()

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.post("apps/:bundleId/dsyms") { request, context in try await upload(request, context) }
        group.get("apps/:bundleId/dsyms") { request, context in try await list(request, context) }
        group.delete("apps/:bundleId/dsyms/:uuid") { request, context in try await delete(request, context) }
    }

    /// The app of the path, once the key may change its symbols (its app's symbols key, or admin).
    private func authorizeChange(_ context: LifelineRequestContext) throws -> String {
        guard let key = context.apiKey else {
            throw APIError.unauthorized("missing API key: send \"Authorization: Bearer <key>\"")
        }
        let app = try QueryController.bundleID(context)
        switch key.role {
        case .admin: break
        case .symbols where key.app == app: break
        case .symbols: throw APIError.forbidden("this symbols key may only upload for \(key.app ?? "its app")")
        default:
            throw APIError.forbidden(
                "uploading symbols needs a symbols key (keys create --role symbols --app \(app)) or an admin key; "
                    + "the key sent is a \(key.role.rawValue) key")
        }
        return app
    }

    private func upload(_ request: Request, _ context: LifelineRequestContext) async throws -> Response {
        let app = try authorizeChange(context)
        let parameters = try QueryParameters(request, extra: ["name"])
        let name = parameters["name"]
        if let name,
            !(1...255).contains(name.utf8.count) || name.contains("/") || name.utf8.contains(where: { $0 < 0x20 })
        {
            throw QueryParameters.invalid(
                "name", "must be a file name of 1 to 255 bytes without / or control characters")
        }
        let type = request.headers[.contentType]?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard type == nil || type == "application/octet-stream" || type == "application/zip" else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type",
                "send a zip of .dSYM bundles as application/zip, or one DWARF or Mach-O file (a .dSYM's "
                    + "Contents/Resources/DWARF/<name>) as application/octet-stream")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBytes {
            throw APIError(.contentTooLarge, code: "body_too_large", "the file is over \(maxBytes) bytes")
        }
        let directory = symbols.symbolWorkDirectory
        let temporary = directory.appendingPathComponent("upload-\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: temporary) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw APIError(.serviceUnavailable, code: "unavailable", "cannot store the upload")
        }
        let handle = try FileHandle(forWritingTo: temporary)
        var written = 0
        do {
            for try await chunk in request.body {
                written += chunk.readableBytes
                guard written <= maxBytes else {
                    throw APIError(.contentTooLarge, code: "body_too_large", "the file is over \(maxBytes) bytes")
                }
                try handle.write(contentsOf: Data(chunk.readableBytesView))
            }
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard written > 0 else { throw APIError(.badRequest, code: "empty_body", "the request has no body") }
        let limits = archiveLimits
        let results: [(symbols: DebugSymbols, imported: Bool)]
        do {
            // A zip is told by its first bytes, whatever the Content-Type said. It is decompressed on
            // NIO's blocking pool, not on the store thread: the keys of other requests are checked there.
            // Its central directory is checked before anything is inflated, and inflating is
            // bounded in bytes and CPU time (`SymbolArchiveLimits`).
            var files = [(file: temporary, binaryName: name ?? "unnamed")]
            if SymbolFiles.isZip(temporary) {
                files = try await NIOThreadPool.singleton.runIfActive {
                    try SymbolFiles.extractArchive(temporary, into: directory, limits: limits)
                }
            }
            defer {
                for item in files where item.file != temporary { try? FileManager.default.removeItem(at: item.file) }
            }
            results = try await symbols.importSymbols(app: app, files: files, now: WallClock.nowSeconds())
        } catch let error as StoreError where error.code == .invalid {
            throw APIError(.unprocessableContent, code: "invalid_symbols", error.message)
        } catch let error as SymbolArchiveError {
            switch error.status {
            case 413: throw APIError(.contentTooLarge, code: error.code.rawValue, error.message)
            case 503:
                throw APIError(
                    .serviceUnavailable, code: error.code.rawValue, error.message, headers: [.retryAfter: "5"])
            default: throw APIError(.unprocessableContent, code: error.code.rawValue, error.message)
            }
        }
        let body = Slices(slices: results.map { Slice(symbols: $0.symbols, imported: $0.imported) })
        let status: HTTPResponse.Status = results.contains { $0.imported } ? .created : .ok
        return try Self.json(body, status: status)
    }

    private func list(_ request: Request, _ context: LifelineRequestContext) async throws -> Response {
        let key = try context.requireKey(.read)
        let app = try QueryController.bundleID(context)
        if let bound = key.app, bound != app { throw APIError.forbidden("this read key may only read \(bound)") }
        let parameters = try QueryParameters(request, extra: ["missing"])
        switch parameters["missing"] {
        case nil, "false": break
        case "true":
            let missing = try await source.read { reader in try await reader.missingSymbols(app: app, limit: 200) }
            // A binary whose slice was marked unusable is missing too: say why.
            var unusable: [String: UnusableSymbols] = [:]
            for slice in try await symbols.debugSymbols(app: app) { unusable[slice.uuid] = slice.unusable }
            return try Self.json(
                Missing(
                    missing: missing.map {
                        MissingBinary(
                            uuid: $0.uuid, binaryName: $0.binaryName, diagnostics: $0.diagnostics,
                            unusable: unusable[$0.uuid])
                    }),
                status: .ok)
        default:
            throw QueryParameters.invalid("missing", "must be true or false")
        }
        let slices = try await symbols.debugSymbols(app: app)
        return try Self.json(Slices(slices: slices.map { Slice(symbols: $0, imported: nil) }), status: .ok)
    }

    private func delete(_ request: Request, _ context: LifelineRequestContext) async throws -> Response {
        let app = try authorizeChange(context)
        let uuid = context.parameters.get("uuid") ?? ""
        guard UUID(uuidString: uuid) != nil else {
            throw APIError(
                .badRequest, code: "invalid_parameter", "uuid must be a UUID like 6F9A…-…, got \(uuid.prefix(64))")
        }
        let removed = try await symbols.deleteSymbols(app: app, uuid: uuid)
        guard removed else {
            throw APIError(.notFound, code: "not_found", "\(app) has no debug symbols with UUID \(uuid.uppercased())")
        }
        return Response(status: .noContent)
    }

    struct Missing: Encodable {
        var missing: [MissingBinary]
    }

    struct MissingBinary: Encodable {
        var uuid: String
        var binaryName: String?
        var diagnostics: Int64
        var unusable: UnusableSymbols?

        enum CodingKeys: String, CodingKey {
            case uuid, diagnostics, unusable
            case binaryName = "binary_name"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(uuid, forKey: .uuid)
            try c.encode(binaryName, forKey: .binaryName)
            try c.encode(diagnostics, forKey: .diagnostics)
            try c.encode(unusable.map(Unusable.init), forKey: .unusable)
        }
    }

    /// `{"reason": "crashed", "at": "2026-…Z"}`: why a slice is not used.
    struct Unusable: Encodable {
        var reason: String
        var at: String

        init(_ mark: UnusableSymbols) {
            reason = mark.reason
            at = UTCTimestamp.iso8601(mark.at)
        }
    }

    struct Slices: Encodable {
        var slices: [Slice]
    }

    struct Slice: Encodable {
        var symbols: DebugSymbols
        var imported: Bool?

        enum CodingKeys: String, CodingKey {
            case uuid, arch, size, imported, unusable
            case binaryName = "binary_name"
            case uploadedAt = "uploaded_at"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(symbols.uuid, forKey: .uuid)
            try c.encode(symbols.arch, forKey: .arch)
            try c.encode(symbols.binaryName, forKey: .binaryName)
            try c.encode(symbols.size, forKey: .size)
            try c.encode(UTCTimestamp.iso8601(symbols.uploadedAt), forKey: .uploadedAt)
            try c.encode(symbols.unusable.map(Unusable.init), forKey: .unusable)
            try c.encodeIfPresent(imported, forKey: .imported)
        }
    }

    static func json(_ body: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body))))
    }
}
