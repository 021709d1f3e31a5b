import ArgumentParser
import AsyncHTTPClient
import Foundation
import LifelineModel
import LifelineSQLite
import LifelineStorage
import NIOCore

/// `lifeline dsym`: debug symbols for symbolicated crash frames.
struct DsymCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dsym",
        abstract:
            "Upload, import and list debug symbols (dSYM) that name the functions, files and lines of crash frames.",
        subcommands: [DsymUploadCommand.self, DsymImportCommand.self, DsymListCommand.self, DsymDeleteCommand.self]
    )
}

extension DsymCommand {
    /// Runs `body` with the symbol store of `--db` (a SQLite file, migrated, or a PostgreSQL
    /// database), with the symbol directory and symbolizer of `--config`; whether it symbolicates.
    static func withStore<T>(
        _ global: GlobalOptions, config: String?, _ body: (any SymbolStore, Bool) async throws -> T
    ) async throws -> T {
        let options = try config.map(ConfigFile.load)?.databaseOptions() ?? .init()
        if global.isPostgres {
            return try await global.withPostgres(options: options) { store in
                try await body(store, store.symbolicator != nil)
            }
        }
        let database = try Database(path: global.db, options: options)
        defer { database.checkpointForExit() }
        try database.migrate()
        return try await body(database.symbolStore, database.symbolicator != nil)
    }
}

/// `lifeline dsym import`: offline import of `.dSYM` bundles or DWARF files.
struct DsymImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import .dSYM bundles, zips of them, or Mach-O files with DWARF into the database's symbol directory.",
        discussion: """
            Each architecture slice is recorded under its LC_UUID (thin and fat files) and copied to \
            <database>.symbols/<UUID> (on PostgreSQL: into the database, in 8 MiB chunks). A zip (an Xcode archive's dSYMs, zipped by CI) is read like the \
            upload endpoint reads it: paths climbing out with .., links and zip bombs refuse the whole file. Frames of that binary are symbolicated when read, crashes \
            stored before the import included. Importing the same UUID again changes nothing (unless it was marked unusable: replaced). \
            Needs llvm-symbolizer on PATH to symbolicate (the Swift toolchain and Debian's llvm ship it).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "YAML configuration file; its symbols section sets the symbol directory (default: <db>.symbols).")
    var config: String?

    @Option(help: "Bundle identifier of the app the symbols belong to.")
    var app: String

    @Argument(help: "dSYM bundles, folders of them (an archive's dSYMs/), zips of them, or DWARF / Mach-O files.")
    var paths: [String]

    func validate() throws {
        guard (1...255).contains(app.utf8.count) else { throw ValidationError("--app must be 1 to 255 bytes") }
        guard !paths.isEmpty else { throw ValidationError("give at least one path") }
    }

    func run() async throws {
        let app = self.app
        let limits = try config.map(ConfigFile.load)?.databaseOptions().symbolArchive ?? SymbolArchiveLimits()
        try await DsymCommand.withStore(global, config: config) { store, symbolicates in
            var imported = 0
            var known = 0
            for path in paths {
                for file in try SymbolFiles.dwarfFiles(at: path) {
                    // A zip (whatever its name) is read within the upload endpoint's bounds.
                    var files = [(file: file, binaryName: file.lastPathComponent)]
                    if SymbolFiles.isZip(file) {
                        do throws(SymbolArchiveError) {
                            files = try SymbolFiles.extractArchive(
                                file, into: store.symbolWorkDirectory, limits: limits)
                        } catch {
                            throw CommandError("\(file.path): \(error.message) (\(error.code.rawValue))")
                        }
                    }
                    defer {
                        for item in files where item.file != file { try? FileManager.default.removeItem(at: item.file) }
                    }
                    for (symbols, isNew) in try await store.importSymbols(
                        app: app, files: files, now: WallClock.nowSeconds())
                    {
                        print(
                            "\(isNew ? "imported" : "known   ") \(symbols.uuid) \(symbols.arch) \(symbols.binaryName)")
                        if isNew { imported += 1 } else { known += 1 }
                    }
                }
            }
            print("slices imported: \(imported), already known: \(known)")
            if !symbolicates {
                printError("note: llvm-symbolizer is not on PATH: frames stay unsymbolicated until it is")
            }
        }
    }
}

/// `lifeline dsym list`.
struct DsymListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the debug symbols of an app (uuid, arch, binary, size, imported at; unusable ones marked).",
        discussion: """
            A slice whose file crashed llvm-symbolizer or gave no answer in time is marked \
            "UNUSABLE (crashed|timed_out since …)": its frames stay unsymbolicated and it is not tried again; \
            importing the same UUID again replaces it and clears the mark.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "YAML configuration file; its symbols section sets the symbol directory (default: <db>.symbols).")
    var config: String?

    @Option(help: "Bundle identifier of the app.")
    var app: String

    func run() async throws {
        let app = self.app
        try await DsymCommand.withStore(global, config: config) { store, _ in
            for symbols in try await store.debugSymbols(app: app) {
                let mark = symbols.unusable.map {
                    " UNUSABLE (\($0.reason) since \(UTCTimestamp.iso8601($0.at)))"
                }
                print(
                    "\(symbols.uuid) \(symbols.arch) \(symbols.binaryName) \(symbols.size) B "
                        + UTCTimestamp.iso8601(symbols.uploadedAt) + (mark ?? ""))
            }
        }
    }
}

/// `lifeline dsym delete`: offline removal of one slice.
struct DsymDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete the debug symbols of one UUID (its row and its file).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "YAML configuration file; its symbols section sets the symbol directory (default: <db>.symbols).")
    var config: String?

    @Option(help: "Bundle identifier of the app.")
    var app: String

    @Argument(help: "The slice's UUID, as `dsym list` shows it.")
    var uuid: String

    func validate() throws {
        guard UUID(uuidString: uuid) != nil else { throw ValidationError("\(uuid) is not a UUID") }
    }

    func run() async throws {
        let (app, uuid) = (self.app, self.uuid)
        try await DsymCommand.withStore(global, config: config) { store, _ in
            guard try await store.deleteSymbols(app: app, uuid: uuid) else {
                throw CommandError("\(app) has no debug symbols with UUID \(uuid.uppercased())")
            }
            print("deleted \(uuid.uppercased())")
        }
    }
}

/// `lifeline dsym upload`: sends dSYMs to a running server (for CI, with a symbols key).
struct DsymUploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload .dSYM bundles, zips of them, or DWARF files to a Lifeline server (for CI).",
        discussion: """
            A .dSYM bundle or a folder of them is sent one DWARF file at a time \
            (application/octet-stream, named after the file); a .zip as it is (application/zip). Files \
            are streamed, never read whole. Use a symbols key (`lifeline keys create --role symbols \
            --app ID`), given with --key or in LIFELINE_KEY. Exits 1 if any upload was refused.
            """
    )

    @Option(help: "Base URL of the server, e.g. https://lifeline.example.com.")
    var server: String

    @Option(help: "A symbols key of the app (or admin); default: $LIFELINE_KEY.")
    var key: String?

    @Option(help: "Bundle identifier of the app the symbols belong to.")
    var app: String

    @Argument(help: "dSYM bundles, folders of them, zips, or DWARF / Mach-O files.")
    var paths: [String]

    func validate() throws {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL")
        }
        guard (1...255).contains(app.utf8.count) else { throw ValidationError("--app must be 1 to 255 bytes") }
        guard !paths.isEmpty else { throw ValidationError("give at least one path") }
        guard resolvedKey != nil else { throw ValidationError("give --key or set LIFELINE_KEY") }
    }

    private var resolvedKey: String? { key ?? ProcessInfo.processInfo.environment["LIFELINE_KEY"] }

    func run() async throws {
        var uploads: [(file: URL, zip: Bool)] = []
        for path in paths {
            let isZip = SymbolFiles.isZip(URL(fileURLWithPath: path))
            uploads +=
                isZip ? [(URL(fileURLWithPath: path), true)] : try SymbolFiles.dwarfFiles(at: path).map { ($0, false) }
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var refused = 0
        do {
            for upload in uploads {
                if try await send(upload.file, zip: upload.zip, client: client) == false { refused += 1 }
            }
        } catch {
            try? await client.shutdown()
            throw CommandError("upload failed: \(error)")
        }
        try await client.shutdown()
        print("files uploaded: \(uploads.count - refused), refused: \(refused)")
        if refused > 0 { throw ExitCode(1) }
    }

    /// Sends one file; prints the server's answer. False when it was refused.
    private func send(_ file: URL, zip: Bool, client: HTTPClient) async throws -> Bool {
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let name = file.lastPathComponent
        var url = base + "/v1/apps/" + Self.escape(app) + "/dsyms"
        if !zip { url += "?name=" + Self.escape(name) }
        printError("uploading \(file.path) (\(size) bytes)")
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(resolvedKey ?? "")")
        request.headers.add(name: "Content-Type", value: zip ? "application/zip" : "application/octet-stream")
        request.body = .stream(FileChunks(file: file), length: .known(Int64(size)))
        let response = try await client.execute(request, timeout: .minutes(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        guard (200..<300).contains(response.status.code) else {
            let error = json?["error"] as? [String: Any]
            let message = error?["message"] as? String ?? String(buffer: body)
            printError("refused \(file.path): \(response.status.code) \(message)")
            return false
        }
        for slice in json?["slices"] as? [[String: Any]] ?? [] {
            let imported = slice["imported"] as? Bool ?? false
            print(
                "\(imported ? "imported" : "known   ") \(slice["uuid"] as? String ?? "?") \(slice["arch"] as? String ?? "?") "
                    + "\(slice["binary_name"] as? String ?? "?")")
        }
        return true
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?&=+")))
            ?? text
    }
}

/// A file read in 1 MiB chunks, for a streamed request body.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let file: URL

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            guard let handle, let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else {
                try? handle?.close()
                return nil
            }
            return ByteBuffer(bytes: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: try? FileHandle(forReadingFrom: file))
    }
}
