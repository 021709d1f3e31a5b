import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineServer
import LifelineSQLite
import LifelineStorage
import LifelineTestFixtures
import LifelineTestSupport
import NIOCore
import Testing
import ZIPFoundation

/// Symbolication from a real arm64 iOS Mach-O with DWARF, built at test time: the toolchain's
/// clang, Debian's `ld64.lld-14` and `dsymutil` (llvm-14). Without them the tests are skipped with
/// a note, and fail under `CI=true` (`.ci/run` installs them).
@Suite("Symbolication from dSYMs")
struct SymbolicationTests {
    @Test("the Mach-O reader finds the UUID, arch and __TEXT of thin and fat files; other files are refused")
    func machOSlices() async throws {
        let directory = TemporaryDirectory()
        guard let dsym = try await Self.buildDemo(in: directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let thin = try Data(contentsOf: dwarf).withUnsafeBytes { try MachOSlices.read($0) }
        #expect(thin.count == 1)
        #expect(thin.first?.arch == "arm64")
        #expect(thin.first?.textVMAddress == 0x1_0000_0000)
        #expect(thin.first?.uuid.count == 36)
        let fat = directory.url.appendingPathComponent("DemoFat")
        let lipo = Process()
        lipo.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        lipo.arguments = ["llvm-lipo-14", "-create", dwarf.path, "-output", fat.path]
        try lipo.run()
        lipo.waitUntilExit()
        if lipo.terminationStatus == 0 {
            let slices = try Data(contentsOf: fat).withUnsafeBytes { try MachOSlices.read($0) }
            #expect(slices.map(\.uuid) == thin.map(\.uuid))
            #expect(slices.first?.offset ?? 0 > 0)
        }
        #expect(throws: StoreError.self) {
            try Data("not a mach-o file at all".utf8).withUnsafeBytes { try MachOSlices.read($0) }
        }
    }

    @Test(
        "frames get function, file and line once the dSYM is imported, for crashes stored before it too",
        arguments: Backend.allCases)
    func retroactiveSymbolication(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        guard let dsym = try await Self.buildDemo(in: env.directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let uuid = try #require(try Data(contentsOf: dwarf).withUnsafeBytes { try MachOSlices.read($0) }.first?.uuid)
        let ingest = try await env.token(.ingest, app: Self.app)
        let read = try await env.token(.read)
        let admin = try await env.token(.admin)
        let path = env.url ?? env.directory.databasePath
        // On PostgreSQL the report's copies of the symbols stay in the test's directory.
        let cache = try env.write(
            "symbols.yaml", "symbols:\n  directory: \(env.directory.url.appendingPathComponent("cli-symbols").path)\n")
        let reportConfig = backend == .postgres ? ["--config", cache] : []
        try await env.withLiveServer { client async throws in
            let posted = try await client.execute(
                uri: "/v1/diagnostics", method: .post, headers: ingestHeaders(ingest),
                body: ByteBuffer(string: Self.crashPayload(uuid: uuid)))
            #expect(posted.status == .accepted, "\(String(buffer: posted.body))")
            func title() async throws -> String? {
                let list = try await client.execute(
                    uri: "/v1/apps/\(Self.app)/crashes?from=2026-11-01&to=2026-11-01", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                return (try json(list.body)["groups"] as? [[String: Any]])?.first?["title"] as? String
            }
            func stack() async throws -> [[String: Any]] {
                let list = try await client.execute(
                    uri: "/v1/apps/\(Self.app)/crashes?from=2026-11-01&to=2026-11-01", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                let id = try #require((try json(list.body)["groups"] as? [[String: Any]])?.first?["id"] as? Int)
                let detail = try await client.execute(
                    uri: "/v1/apps/\(Self.app)/crashes/\(id)?from=2026-11-01&to=2026-11-01", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                return try #require(try json(detail.body)["sample_stack"] as? [[String: Any]])
            }
            let before = try await stack()
            #expect(before.count == 2)
            #expect(before.allSatisfy { $0["function"] is NSNull })
            #expect(try await title() == "EXC_BAD_ACCESS / SIGSEGV at Demo +0x4030")
            func missing() async throws -> [[String: Any]] {
                let response = try await client.execute(
                    uri: "/v1/apps/\(Self.app)/dsyms?missing=true", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                return try #require(try json(response.body)["missing"] as? [[String: Any]])
            }
            let lacking = try await missing()
            #expect(lacking.count == 1)
            #expect(lacking.first?["uuid"] as? String == uuid)
            #expect(lacking.first?["binary_name"] as? String == "Demo")
            #expect(lacking.first?["diagnostics"] as? Int == 1)
            // The report lists the binary as missing its symbols too.
            let missingReport = try await Lifeline.run(
                [
                    "report", "--db", path, "--app", Self.app, "--from", "2026-11-01", "--to", "2026-11-01", "--format",
                    "json", "--out", "-",
                ] + reportConfig)
            #expect(missingReport.status == 0, "\(missingReport.stderr)")
            let reported = try JSONSerialization.jsonObject(with: Data(missingReport.stdout.utf8)) as? [String: Any]
            let reportedMissing = reported?["missing_symbols"] as? [[String: Any]]
            #expect(reportedMissing?.map { $0["uuid"] as? String } == [uuid])
            #expect(reportedMissing?.first?["binary_name"] as? String == "Demo")

            let imported = try await Lifeline.run(["dsym", "import", "--db", path, "--app", Self.app, dsym.path])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("imported \(uuid) arm64 Demo"), "\(imported.stdout)")
            let again = try await Lifeline.run(["dsym", "import", "--db", path, "--app", Self.app, dsym.path])
            #expect(again.stdout.contains("slices imported: 0, already known: 1"), "\(again.stdout)")

            let after = try await stack()
            #expect(after.first?["function"] as? String == "Demo.Parser.parse(Swift.String) -> Swift.Int")
            #expect(after.first?["file"] as? String == "demo.c")
            #expect(after.first?["line"] as? Int == 4)
            // The caller's return address is looked up one byte back (inside the call).
            #expect(after.last?["function"] as? String == "helper")
            #expect(after.last?["line"] as? Int == 1)
            #expect(
                try await title()
                    == "EXC_BAD_ACCESS / SIGSEGV in Demo.Parser.parse(Swift.String) -> Swift.Int — demo.c:4")
            #expect(try await missing().isEmpty)

            // Deleted over HTTP: frames are bare again; uploaded over HTTP: named again.
            let deleted = try await client.execute(
                uri: "/v1/apps/\(Self.app)/dsyms/\(uuid)", method: .delete, headers: [.authorization: "Bearer \(admin)"]
            )
            #expect(deleted.status == .noContent)
            #expect(try await stack().allSatisfy { $0["function"] is NSNull })
            let uploaded = try await client.execute(
                uri: "/v1/apps/\(Self.app)/dsyms?name=Demo", method: .post,
                headers: [.authorization: "Bearer \(admin)", .contentType: "application/octet-stream"],
                body: ByteBuffer(bytes: try Data(contentsOf: dwarf)))
            #expect(uploaded.status == .created, "\(String(buffer: uploaded.body))")
            #expect(try await stack().first?["function"] as? String == "Demo.Parser.parse(Swift.String) -> Swift.Int")
        }
        // The HTML report's sample stack names the function, file and line too.
        let html = env.directory.url.appendingPathComponent("report.html").path
        let report = try await Lifeline.run(
            [
                "report", "--db", path, "--app", Self.app, "--from", "2026-11-01", "--to", "2026-11-01", "--format",
                "html", "--out", html,
            ] + reportConfig)
        #expect(report.status == 0, "\(report.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("Demo.Parser.parse(Swift.String) -&gt; Swift.Int (demo.c:4)"))
        let junk = try env.write("junk.bin", String(repeating: "not a Mach-O file. ", count: 8))
        let refused = try await Lifeline.run(["dsym", "import", "--db", path, "--app", Self.app, junk])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("not a 64-bit Mach-O file"), "\(refused.stderr)")
        await env.remove()
    }

    @Test(
        "PostgreSQL keeps a slice in chunks: written and read back whole on a fresh node, used there; deleted, it stops being used"
    )
    func postgresChunks() async throws {
        guard let server = PostgresServer.running() else { return }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        guard let dsym = try await Self.buildDemo(in: directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let slice = try #require(try Data(contentsOf: dwarf).withUnsafeBytes { try MachOSlices.read($0) }.first)
        let url = try server.createDatabase()
        // 1 KiB chunks: the demo's slice spans many of them.
        let writer = try PostgresStore(
            url: url, logger: .quiet, symbolCache: directory.url.appendingPathComponent("writer"),
            symbolChunkBytes: 1_024)
        try await writer.migrate()
        _ = try await writer.write(
            IngestRequest(
                app: Self.app,
                items: try IngestPipeline().prepare(
                    body: ByteBuffer(string: Self.crashPayload(uuid: slice.uuid)), encoding: .identity,
                    family: .diagnostic, app: Self.app, receivedAt: 0)))
        let imported = try await writer.importSymbols(app: Self.app, files: [(dwarf, "Demo")], now: 1)
        #expect(imported.map { $0.imported } == [true])
        #expect(
            try await writer.importSymbols(app: Self.app, files: [(dwarf, "Demo")], now: 2).map { $0.imported } == [
                false
            ])
        // Another node, with its own empty cache, symbolicates from the chunks.
        let cache = directory.url.appendingPathComponent("reader")
        let reader = try PostgresStore(url: url, logger: .quiet, symbolCache: cache, symbolicator: Symbolicator())
        func frames() async throws -> [SampleFrame] {
            try await reader.read { reader in
                let rows = try await reader.diagnostics(
                    Scope(app: Self.app, days: DayRange(from: "2026-11-01", to: "2026-11-01")))
                return try await reader.crashGroups(app: Self.app, ids: rows.map(\.crashGroup)).first?.sampleFrames
                    ?? []
            }
        }
        let named = try await frames()
        #expect(named.first?.symbols.first?.function == "Demo.Parser.parse(Swift.String) -> Swift.Int")
        let copy = try Data(contentsOf: cache.appendingPathComponent(slice.uuid))
        let original = try Data(contentsOf: dwarf)
        #expect(copy == original[slice.offset..<(slice.offset + slice.size)])
        #expect(try await writer.deleteSymbols(app: Self.app, uuid: slice.uuid))
        #expect(try await frames().first?.symbols.isEmpty == true)
        await writer.shutdown()
        await reader.shutdown()
    }

    @Test("upload over HTTP: symbols or admin key, streamed, idempotent by UUID; ingest keys refused; bad files named")
    func upload() async throws {
        let env = try TemporaryDatabase()
        guard let dsym = try await Self.buildDemo(in: env.directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let bytes = try Data(contentsOf: dwarf)
        let uuid = try #require(try bytes.withUnsafeBytes { try MachOSlices.read($0) }.first?.uuid)
        let admin = try env.token(.admin)
        let ingest = try env.token(.ingest, app: Self.app)
        let read = try env.token(.read)
        try await TemporaryDatabase.withLiveServer(env.config()) { client async throws in
            func post(_ body: Data, _ token: String, type: String = "application/octet-stream") async throws
                -> TestResponse
            {
                try await client.execute(
                    uri: "/v1/apps/\(Self.app)/dsyms", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: type], body: ByteBuffer(bytes: body))
            }
            let first = try await post(bytes, admin)
            #expect(first.status == .created, "\(String(buffer: first.body))")
            let slice = try #require((try json(first.body)["slices"] as? [[String: Any]])?.first)
            #expect(slice["uuid"] as? String == uuid)
            #expect(slice["arch"] as? String == "arm64")
            #expect(slice["imported"] as? Bool == true)
            let again = try await post(bytes, admin)
            #expect(again.status == .ok)
            #expect((try json(again.body)["slices"] as? [[String: Any]])?.first?["imported"] as? Bool == false)
            #expect(try await post(bytes, ingest).status == .forbidden)
            // The app's symbols key (CI) may upload; another app's may not; it reads nothing.
            let symbols = try env.token(.symbols, app: Self.app)
            let otherSymbols = try env.token(.symbols, app: "com.example.other")
            #expect(try await post(bytes, symbols).status == .ok)
            #expect(try await post(bytes, otherSymbols).status == .forbidden)
            let reading = try await client.execute(
                uri: "/v1/apps/\(Self.app)/dsyms", method: .get, headers: [.authorization: "Bearer \(symbols)"])
            #expect(reading.status == .forbidden)
            let junk = try await post(Data(String(repeating: "junk ", count: 40).utf8), admin)
            #expect(junk.status == .unprocessableContent)
            #expect(errorCode(junk.body) == "invalid_symbols")
            #expect(try await post(bytes, admin, type: "text/plain").status == .unsupportedMediaType)
            let listed = try await client.execute(
                uri: "/v1/apps/\(Self.app)/dsyms", method: .get, headers: [.authorization: "Bearer \(read)"])
            #expect((try json(listed.body)["slices"] as? [[String: Any]])?.map { $0["uuid"] as? String } == [uuid])
        }
        // Nothing of the uploads is left behind but the one symbol file.
        let left = try FileManager.default.contentsOfDirectory(atPath: env.database.symbolDirectory.path)
        #expect(left == [uuid])
    }

    @Test("C++ names are demangled by llvm-symbolizer, Swift names by the Swift runtime")
    func demangling() async throws {
        let directory = TemporaryDirectory()
        guard let dsym = try await Self.buildDemo(in: directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let symbolicator = try #require(Symbolicator(processes: 2))
        // Twice each: both processes of the pool answer (and then the cache).
        for _ in 0..<2 {
            let draw = symbolicator.symbolicate(file: dwarf.path, address: 0x1_0000_4074)
            #expect(draw == [FrameSymbol(function: "Demo::Shape::draw()", file: "demo.c", line: 9)])
            let parse = symbolicator.symbolicate(file: dwarf.path, address: 0x1_0000_4030)
            #expect(parse.first?.function == "Demo.Parser.parse(Swift.String) -> Swift.Int")
        }
        #expect(symbolicator.symbolicate(file: dwarf.path, address: 0x2_0000_0000).isEmpty)
    }

    /// A zip of `entries` (path in the zip → bytes) at `url`, deflated.

    @Test("zips of dSYMs: imported; ../ paths and zip bombs refuse the whole file; DELETE; `dsym upload` for CI")
    func zipUploadsAndDelete() async throws {
        let env = try TemporaryDatabase()
        guard let dsym = try await Self.buildDemo(in: env.directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let bytes = try Data(contentsOf: dwarf)
        let uuid = try #require(try bytes.withUnsafeBytes { try MachOSlices.read($0) }.first?.uuid)
        let dir = env.directory.url
        let good = dir.appendingPathComponent("good.zip")
        try Self.zip(
            good,
            [
                ("Demo.app.dSYM/Contents/Info.plist", Data("<plist/>".utf8)),
                ("Demo.app.dSYM/Contents/Resources/DWARF/Demo", bytes),
                ("__MACOSX/Demo.app.dSYM/Contents/Resources/DWARF/._Demo", Data("resource fork".utf8)),
            ])
        let evil = dir.appendingPathComponent("evil.zip")
        try Self.zip(
            evil,
            [
                ("Demo.app.dSYM/Contents/Resources/DWARF/Demo", bytes),
                ("../../evil.dSYM/Contents/Resources/DWARF/evil", bytes),
            ])
        let bomb = dir.appendingPathComponent("bomb.zip")
        // 64 MB to checksum and deflate: seconds of a debug build, off Swift's cooperative pool.
        try await offPool {
            try Self.zip(bomb, [("Bomb.dSYM/Contents/Resources/DWARF/Bomb", Data(count: 64 << 20))])
        }
        let symbols = try env.token(.symbols, app: Self.app)
        let ingest = try env.token(.ingest, app: Self.app)
        let read = try env.token(.read)
        try await TemporaryDatabase.withLiveServer(env.config()) { client async throws in
            let port = try #require(client.port)
            func post(_ file: URL) async throws -> PatientResponse {
                try await requestPatiently(
                    port: port, uri: "/v1/apps/\(Self.app)/dsyms",
                    headers: [.authorization: "Bearer \(symbols)", .contentType: "application/zip"],
                    body: ByteBuffer(bytes: try Data(contentsOf: file)))
            }
            func listed() async throws -> [String?] {
                let list = try await requestPatiently(
                    port: port, uri: "/v1/apps/\(Self.app)/dsyms", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                return (try json(list.body)["slices"] as? [[String: Any]])?.map { $0["uuid"] as? String } ?? []
            }
            let first = try await post(good)
            #expect(first.status == .created, "\(String(buffer: first.body))")
            let slice = try #require((try json(first.body)["slices"] as? [[String: Any]])?.first)
            #expect(slice["uuid"] as? String == uuid)
            #expect(slice["binary_name"] as? String == "Demo")
            #expect(try await post(good).status == .ok)

            let refused = try await post(evil)
            #expect(refused.status == .unprocessableContent)
            #expect(errorCode(refused.body) == "unsafe_zip_entry")
            #expect(String(buffer: refused.body).contains("climbs out"), "\(String(buffer: refused.body))")
            let bombed = try await post(bomb)
            #expect(bombed.status == .unprocessableContent)
            #expect(errorCode(bombed.body) == "zip_bomb")
            #expect(String(buffer: bombed.body).contains("zip bomb"), "\(String(buffer: bombed.body))")

            // DELETE: the app's symbols key or admin; ingest keys refused; unknown UUIDs are 404.
            func delete(_ token: String, _ id: String = uuid) async throws -> HTTPResponse.Status {
                try await requestPatiently(
                    port: port, uri: "/v1/apps/\(Self.app)/dsyms/\(id)", method: .delete,
                    headers: [.authorization: "Bearer \(token)"]
                ).status
            }
            #expect(try await delete(ingest) == .forbidden)
            #expect(try await delete(symbols, "not-a-uuid") == .badRequest)
            #expect(try await delete(symbols) == .noContent)
            #expect(try await listed().isEmpty)
            #expect(
                !FileManager.default.fileExists(atPath: env.database.symbolDirectory.appendingPathComponent(uuid).path))
            #expect(try await delete(symbols) == .notFound)

            // `lifeline dsym upload`, as CI runs it, against this server.
            let upload = try await Lifeline.run([
                "dsym", "upload", "--server", "http://127.0.0.1:\(port)", "--key", symbols, "--app", Self.app,
                dsym.path,
            ])
            #expect(upload.status == 0, "\(upload.stderr)")
            #expect(upload.stdout.contains("imported \(uuid) arm64 Demo"), "\(upload.stdout)")
            #expect(try await listed() == [uuid])
            let denied = try await Lifeline.run([
                "dsym", "upload", "--server", "http://127.0.0.1:\(port)", "--key", symbols, "--app", Self.app,
                evil.path,
            ])
            #expect(denied.status == 1)
            #expect(denied.stderr.contains("422"), "\(denied.stderr)")
        }
        // Nothing was written where the entries' names pointed, and no temporary file is left.
        #expect(
            !FileManager.default.fileExists(
                atPath: dir.deletingLastPathComponent().appendingPathComponent("evil.dSYM").path))
        let left = try FileManager.default.contentsOfDirectory(atPath: env.database.symbolDirectory.path)
        #expect(left == [uuid])
    }

    @Test("the config file's symbols section moves the symbol directory; a missing llvm_symbolizer is refused")
    func symbolsConfig() async throws {
        let env = try TemporaryDatabase()
        guard let dsym = try await Self.buildDemo(in: env.directory.url) else { return }
        let elsewhere = env.directory.url.appendingPathComponent("elsewhere").path
        let config = try env.write("lifeline.yaml", "symbols:\n  directory: \(elsewhere)\n")
        let imported = try await Lifeline.run([
            "dsym", "import", "--db", env.path, "--config", config, "--app", Self.app, dsym.path,
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: elsewhere)
        #expect(files.count == 1 && files.first?.count == 36, "\(files)")
        #expect(!FileManager.default.fileExists(atPath: env.path + ".symbols"))
        let listed = try await Lifeline.run(["dsym", "list", "--db", env.path, "--config", config, "--app", Self.app])
        #expect(listed.stdout.contains("arm64 Demo"), "\(listed.stdout)")
        let bad = try env.write("bad.yaml", "symbols:\n  llvm_symbolizer: /nonexistent/llvm-symbolizer\n")
        let refused = try await Lifeline.run(["dsym", "list", "--db", env.path, "--config", bad, "--app", Self.app])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("symbols.llvm_symbolizer /nonexistent/llvm-symbolizer is not an executable file"))
    }
}
