import Foundation
import HTTPTypes
import HummingbirdTesting
import LifelineTestSupport
import NIOCore
import Synchronization
import Testing

/// `lifeline backup` (issue 23): a copy taken while the server ingests restores, as the README
/// says, to a database that answers the same queries, debug symbols included.
@Suite("Backup and restore", .serialized)
struct BackupTests {
    @Test("a backup made while the server ingests restores to the same answers, dSYMs included")
    func backupWhileIngesting() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        guard let dsym = try await SymbolicationTests.buildDemo(in: directory.url) else { return }
        let database = directory.url.appendingPathComponent("lifeline.sqlite").path
        func run(_ arguments: [String]) async throws -> String {
            let result = try await Lifeline.run(arguments)
            #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout
        }
        func token(_ arguments: [String]) async throws -> String {
            let said = try await run(["keys", "create", "--db", database] + arguments)
            return try #require(said.split(separator: "\n").last).description
        }
        let app = SymbolicationTests.app
        let ingest = try await token(["--role", "ingest", "--app", app])
        let load = try await token(["--role", "ingest", "--app", "com.example.load"])
        let read = try await token(["--role", "read"])
        let imported = try await run(["dsym", "import", "--db", database, "--app", app, dsym.path])
        let uuid = try #require(
            imported.split(whereSeparator: \.isWhitespace).map(String.init).first { $0.count == 36 && $0.contains("-") }
        )

        let server = try Lifeline.Server(database: database)
        try await server.waitUntilReady()
        let crash = ByteBuffer(string: SymbolicationTests.crashPayload(uuid: uuid))
        try await TestClient.withClient(host: "127.0.0.1", port: server.port) { http in
            let response = try await http.post("/v1/diagnostics", headers: ingestHeaders(ingest), body: crash)
            #expect(response.status == .accepted)
        }
        // Another app keeps ingesting while the backup runs.
        let stop = Atomic<Bool>(false)
        let loader = Task {
            try await TestClient.withClient(host: "127.0.0.1", port: server.port) { http in
                var sent = 0
                while !stop.load(ordering: .relaxed) {
                    let day = String(format: "2026-10-%02d", sent % 28 + 1)
                    let body = """
                        {"appVersion": "1.\(sent)", "timeStampBegin": "\(day) 00:00:00 +0000",
                         "timeStampEnd": "\(day) 23:59:00 +0000", "metaData": {"bundleIdentifier": "com.example.load",
                         "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": "iPhone15,2"}}
                        """
                    let response = try await http.post(
                        "/v1/metrics", headers: ingestHeaders(load), body: ByteBuffer(string: body))
                    #expect(response.status == .accepted)
                    sent += 1
                }
                return sent
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let backup = directory.url.appendingPathComponent("backup.sqlite").path
        let said = try await run(["backup", "--db", database, "--out", backup])
        #expect(said.contains("1 symbol file(s)"), "\(said)")
        stop.store(true, ordering: .relaxed)
        #expect(try await loader.value > 0)

        // Restore as the README says: the copy in place of the database, OUT.symbols beside it.
        let restoredDirectory = directory.url.appendingPathComponent("restored")
        try FileManager.default.createDirectory(at: restoredDirectory, withIntermediateDirectories: true)
        let restored = restoredDirectory.appendingPathComponent("lifeline.sqlite").path
        try FileManager.default.moveItem(atPath: backup, toPath: restored)
        try FileManager.default.moveItem(atPath: backup + ".symbols", toPath: restored + ".symbols")
        #expect(!FileManager.default.fileExists(atPath: restored + "-wal"), "the copy is one file")
        let copy = try Lifeline.Server(database: restored)
        try await copy.waitUntilReady()

        let headers: HTTPFields = [.authorization: "Bearer \(read)"]
        let window = "from=2026-10-01&to=2026-11-30"
        func answers(_ port: Int) async throws -> [String] {
            try await TestClient.withClient(host: "127.0.0.1", port: port) { http in
                let groups = try json(
                    try await http.get("/v1/apps/\(app)/crashes?\(window)", headers: headers).body ?? ByteBuffer())
                let id = try #require((groups["groups"] as? [[String: Any]])?.first?["id"] as? Int)
                var bodies: [String] = []
                for path in [
                    "/v1/apps/\(app)/crashes/\(id)?\(window)", "/v1/apps/\(app)/summary?\(window)",
                    "/v1/apps/\(app)/dsyms",
                ] {
                    let response = try await http.get(path, headers: headers)
                    #expect(response.status == .ok, "\(path)")
                    // Compared as JSON values (object keys in any order).
                    let value = try JSONSerialization.jsonObject(with: Data(buffer: response.body ?? ByteBuffer()))
                    let canonical = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
                    bodies.append(String(decoding: canonical, as: UTF8.self))
                }
                return bodies
            }
        }
        let original = try await answers(server.port)
        let fromCopy = try await answers(copy.port)
        #expect(original == fromCopy)
        #expect(original.first?.contains("Parser.parse") == true, "the crash is symbolicated: \(original.first ?? "")")
        copy.kill(SIGTERM)
        #expect(await copy.wait() == 0)
        server.kill(SIGTERM)
        #expect(await server.wait() == 0)
        // Every command leaves the file complete: no write-ahead log left behind after a clean stop.
        let wal = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the server checkpointed on its way out")
    }
}
