import Foundation
import LifelineModel
import LifelineSQLite
import LifelineTestSupport
import Testing

@Suite("The lifeline binary's commands")
struct CommandLineTests {
    @Test("keys create prints the key alone on the last line, and it verifies; list and revoke work")
    func keysLifecycle() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let created = try await Lifeline.run([
            "keys", "create", "--db", env.path, "--role", "ingest", "--app", "com.example.app",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let token = try #require(created.stdout.split(separator: "\n").last.map(String.init))
        #expect(!token.contains(" "))
        let key = try #require(try env.database.verify(token: token))
        #expect(key.role == .ingest)
        #expect(key.app == "com.example.app")

        let listed = try await Lifeline.run(["keys", "list", "--db", env.path, "--json"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains(key.id))
        #expect(!listed.stdout.contains(token), "secrets are never listed")

        let revoked = try await Lifeline.run(["keys", "revoke", "--db", env.path, key.id])
        #expect(revoked.status == 0)
        #expect(try env.database.verify(token: token) == nil)
    }

    @Test("keys create refuses an ingest key without --app, with a message")
    func ingestKeyNeedsApp() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let result = try await Lifeline.run(["keys", "create", "--db", env.path, "--role", "ingest"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--app"))
    }

    @Test("ingest imports fixture files offline, and a second run counts them as duplicates")
    func offlineIngest() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let files = [
            Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__real_report.json").path,
            Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json").path,
        ]
        let first = try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter"] + files)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("documents accepted: 2, duplicates: 0"), "\(first.stdout)")
        let second = try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter"] + files)
        #expect(second.stdout.contains("documents accepted: 0, duplicates: 2"), "\(second.stdout)")
        #expect(try env.database.payloadCount(app: "com.chimehq.Meter", kind: .diagnostic) == 2)
    }

    @Test("compact shrinks the raw copies of an ingested database, then has nothing left to do; PostgreSQL is refused")
    func compact() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        // (The ingest's own writer may have compacted some behind its fold already.)
        let report = try await Lifeline.simulatedAndCompacted(env, app: "com.example.notes", devices: 12, days: 2)
        let total = report["total_compacted"] as? Int ?? 0
        #expect(total > 20, "\(report)")
        #expect((report["total_bytes_after"] as? Int ?? 0) < (report["total_bytes_before"] as? Int ?? 0) * 8 / 10)
        let second = try await Lifeline.run(["compact", "--db", env.path])
        #expect(second.stdout.contains("considered 0 payloads, rewrote 0 raw copies"), "\(second.stdout)")
        #expect(second.stdout.contains("in all: \(total) copies rewritten"), "\(second.stdout)")
        let postgres = try await Lifeline.run(["compact", "--db", "postgres://127.0.0.1:1/none"])
        #expect(postgres.status != 0 && postgres.stderr.contains("SQLite file"), "\(postgres.stderr)")
    }

    @Test("ingest refuses a file of another app and exits non-zero")
    func offlineIngestRefusesOtherApp() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let file = Paths.fixtures.appendingPathComponent("metrics/lifeline-authored__ios17-full.json").path
        let result = try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.other.app", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("com.example.notes"))
    }

    @Test("migrate creates the schema, then reports it up to date")
    func migrate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        let first = try await Lifeline.run(["migrate", "--db", path])
        #expect(first.status == 0)
        #expect(first.stdout.contains("applied 0001"))
        let second = try await Lifeline.run(["migrate", "--db", path])
        #expect(second.stdout.contains("up to date"))
    }

    @Test("backup writes a consistent copy with the same payloads and refuses to overwrite")
    func backup() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let file = Paths.fixtures.appendingPathComponent("diagnostics/ChimeHQ_Meter__real_report.json").path
        let ingested = try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter", file])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let copyPath = env.directory.url.appendingPathComponent("copy.sqlite").path
        let result = try await Lifeline.run(["backup", "--db", env.path, "--out", copyPath])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("integrity ok"))
        let copy = try Database(path: copyPath)
        #expect(try copy.payloadCount(app: "com.chimehq.Meter", kind: .diagnostic) == 1)
        let again = try await Lifeline.run(["backup", "--db", env.path, "--out", copyPath])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"))
    }

    @Test("prune --dry-run counts and keeps; prune removes the old days and keeps the rest; a bad policy is named")
    func prune() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let chime = [
            "diagnostics/ChimeHQ_Meter__real_report.json", "diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json",
        ]
        .map { Paths.fixtures.appendingPathComponent($0).path }
        let notes = Paths.fixtures.appendingPathComponent("metrics/lifeline-authored__ios17-full.json").path
        #expect(try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.chimehq.Meter"] + chime).status == 0)
        #expect(try await Lifeline.run(["ingest", "--db", env.path, "--app", "com.example.notes", notes]).status == 0)
        // Keep from 2026-01-01: the 2020 diagnostics go, the 2026-11-01 metric payload stays.
        let kept: UTCDay = "2026-01-01"
        let days = UTCDay.today.ordinal - kept.ordinal + 1
        let config = try env.write("retention.yaml", "retention:\n  data_days: \(days)\n  raw_days: 0\n")

        let dry = try await Lifeline.run(["prune", "--db", env.path, "--config", config, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would remove 2 payloads, 2 raw documents"), "\(dry.stdout)")
        #expect(dry.stdout.contains("data kept from 2026-01-01"), "\(dry.stdout)")
        #expect(try env.database.payloadCount() == 3)

        let real = try await Lifeline.run(["prune", "--db", env.path, "--config", config])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(real.stdout.contains("removed 2 payloads, 2 raw documents"), "\(real.stdout)")
        #expect(real.stdout.contains("database file"), "\(real.stdout)")
        #expect(try env.database.payloadCount(app: "com.chimehq.Meter") == 0)
        #expect(try env.database.payloadCount(app: "com.example.notes") == 1)
        #expect(try env.database.crashGroups(app: "com.chimehq.Meter").isEmpty)

        // The shipped example configuration loads, and its policy is the documented default.
        let example = Paths.repository.appendingPathComponent("config/lifeline.example.yaml").path
        let defaults = try await Lifeline.run(["prune", "--db", env.path, "--config", example, "--dry-run"])
        #expect(defaults.status == 0, "\(defaults.stderr)")
        #expect(
            defaults.stderr.contains(
                "data kept 180 days, raw documents 30 days, idempotency records 7 days, alert history 90 days"),
            "\(defaults.stderr)")

        let bad = try env.write("bad.yaml", "retention:\n  data_days: -3\n")
        let refused = try await Lifeline.run(["prune", "--db", env.path, "--config", bad])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("retention.data_days must be 0 (keep forever)"), "\(refused.stderr)")
    }
}
