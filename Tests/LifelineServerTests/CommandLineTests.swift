import Foundation
import LifelineStore
import LifelineTestSupport
import Testing

@Suite("The lifeline binary's commands")
struct CommandLineTests {
    @Test("keys create prints the key alone on the last line, and it verifies; list and revoke work")
    func keysLifecycle() throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let created = try Lifeline.run([
            "keys", "create", "--db", env.path, "--role", "ingest", "--app", "com.example.app",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let token = try #require(created.stdout.split(separator: "\n").last.map(String.init))
        #expect(!token.contains(" "))
        let key = try #require(try env.database.verify(token: token))
        #expect(key.role == .ingest)
        #expect(key.app == "com.example.app")

        let listed = try Lifeline.run(["keys", "list", "--db", env.path, "--json"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains(key.id))
        #expect(!listed.stdout.contains(token), "secrets are never listed")

        let revoked = try Lifeline.run(["keys", "revoke", "--db", env.path, key.id])
        #expect(revoked.status == 0)
        #expect(try env.database.verify(token: token) == nil)
    }

    @Test("keys create refuses an ingest key without --app, with a message")
    func ingestKeyNeedsApp() throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let result = try Lifeline.run(["keys", "create", "--db", env.path, "--role", "ingest"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--app"))
    }

    @Test("ingest imports fixture files offline, and a second run counts them as duplicates")
    func offlineIngest() throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let files = [
            Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__real_report.json").path,
            Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json").path,
        ]
        let first = try Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter"] + files)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("documents accepted: 2, duplicates: 0"), "\(first.stdout)")
        let second = try Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter"] + files)
        #expect(second.stdout.contains("documents accepted: 0, duplicates: 2"), "\(second.stdout)")
        #expect(try env.database.payloadCount(app: "com.chimehq.Meter", kind: .diagnostic) == 2)
    }

    @Test("ingest refuses a file of another app and exits non-zero")
    func offlineIngestRefusesOtherApp() throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let file = Paths.fixtures.appendingPathComponent("metrics/lifeline-authored__ios17-full.json").path
        let result = try Lifeline.run(["ingest", "--db", env.path, "--app", "com.other.app", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("com.example.notes"))
    }

    @Test("migrate creates the schema, then reports it up to date")
    func migrate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        let first = try Lifeline.run(["migrate", "--db", path])
        #expect(first.status == 0)
        #expect(first.stdout.contains("applied 0001"))
        let second = try Lifeline.run(["migrate", "--db", path])
        #expect(second.stdout.contains("up to date"))
    }

    @Test("backup writes a consistent copy with the same payloads and refuses to overwrite")
    func backup() throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let file = Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__real_report.json").path
        let ingested = try Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter", file])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let copyPath = env.directory.url.appendingPathComponent("copy.sqlite").path
        let result = try Lifeline.run(["backup", "--db", env.path, "--out", copyPath])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("integrity ok"))
        let copy = try Database(path: copyPath)
        #expect(try copy.payloadCount(app: "com.chimehq.Meter", kind: .diagnostic) == 1)
        let again = try Lifeline.run(["backup", "--db", env.path, "--out", copyPath])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"))
    }
}
