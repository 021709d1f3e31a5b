import Foundation
import LifelineTestSupport
import Testing

/// The command line on PostgreSQL: `migrate`, `ingest` and `report` take a `postgres://` URL for
/// `--db`, and `migrate-data` moves a SQLite installation over with the same answers.
@Suite("Command line on PostgreSQL")
struct PostgresCommandTests {
    @Test("migrate-data copies a SQLite database: the JSON reports of both are the same; a second run copies nothing")
    func migrateData() throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let env = try TemporaryDatabase()
        let out = env.directory.url.appendingPathComponent("payloads").path
        let app = "com.example.notes"
        let simulated = try Lifeline.run([
            "simulate", "--out", out, "--app", app, "--devices", "25", "--days", "3", "--start", "2026-10-01",
        ])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let ingested = try Lifeline.run(["ingest", "--db", env.path, "--app", app, out])
        #expect(ingested.status == 0, "\(ingested.stderr)")

        let migrated = try Lifeline.run(["migrate", "--db", url])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("schema at migration"), "\(migrated.stdout)")
        let copied = try Lifeline.run(["migrate-data", "--from", env.path, "--to", url, "--batch", "40"])
        #expect(copied.status == 0, "\(copied.stderr)")
        let count = try #require(
            copied.stdout.split(separator: ",").first?.split(separator: " ").last.flatMap { Int($0) })
        #expect(count > 75, "\(copied.stdout)")
        #expect(copied.stdout.contains("refused: 0"), "\(copied.stdout)")
        let again = try Lifeline.run(["migrate-data", "--from", env.path, "--to", url])
        #expect(again.stdout.contains("documents copied: 0, already there: \(count)"), "\(again.stdout)")

        func canonical(_ value: Any) throws -> String {
            String(
                decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]),
                as: UTF8.self)
        }
        func report(_ db: String) throws -> [String: Any] {
            let run = try Lifeline.run([
                "report", "--db", db, "--app", app, "--from", "2026-09-28", "--to", "2026-10-05", "--format", "json",
                "--out", "-",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            var json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            json["generated_at"] = nil
            // iOS 27 app-state breakdowns are not kept by the PostgreSQL store yet (README).
            json["exits_by_app_state"] = nil
            json["hangs_by_app_state"] = nil
            // Crash group ids are each store's own.
            json["top_crashes"] = try (json["top_crashes"] as? [[String: Any]])?.map { crash -> String in
                var crash = crash
                crash["id"] = nil
                return try canonical(crash)
            }.sorted()
            return json
        }
        let sqlite = try report(env.path)
        let postgres = try report(url)
        #expect(Set(sqlite.keys) == Set(postgres.keys))
        for key in sqlite.keys.sorted() {
            #expect(try canonical(sqlite[key] ?? NSNull()) == canonical(postgres[key] ?? NSNull()), "section \(key)")
        }
        // The password never shows: a URL with one is printed without it.
        let withPassword = url.replacingOccurrences(of: "lifeline@", with: "lifeline:s3cret@")
        let status = try Lifeline.run(["migrate", "--db", withPassword])
        #expect(!status.stdout.contains("s3cret") && !status.stderr.contains("s3cret"))
    }
}
