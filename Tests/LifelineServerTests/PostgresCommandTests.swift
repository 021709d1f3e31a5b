import Foundation
import Hummingbird
import HummingbirdTesting
import LifelineAnalysis
import LifelineModel
import LifelinePostgres
import LifelineTestSupport
import Synchronization
import Testing

/// The command line on PostgreSQL: `migrate`, `ingest` and `report` take a `postgres://` URL for
/// `--db`, and `migrate-data` moves a SQLite installation over with the same answers.
@Suite("Command line on PostgreSQL")
struct PostgresCommandTests {
    /// An ingest token of `app` and a read token, made by `lifeline keys create --db url`.
    static func keys(_ url: String, app: String) async throws -> (ingest: String, read: String) {
        func token(_ arguments: [String]) async throws -> String {
            let created = try await Lifeline.run(["keys", "create", "--db", url] + arguments)
            #expect(created.status == 0, "\(created.stderr)")
            return try #require(created.stdout.split(separator: "\n").last.map(String.init))
        }
        return (try await token(["--role", "ingest", "--app", app]), try await token(["--role", "read"]))
    }

    /// What each node's `/readyz` says of leadership (nil: no answer).
    static func leaders(_ nodes: [Lifeline.Server]) async -> [Bool?] {
        var answers: [Bool?] = []
        for node in nodes {
            let answer = try? await TestClient.withClient(host: "127.0.0.1", port: node.port) { http in
                try json(try await http.get("/readyz").body ?? ByteBuffer())["leader"] as? Bool
            }
            answers.append(answer ?? nil)
        }
        return answers
    }

    @Test(
        "migrate-data copies a SQLite database (its raw copies compacted): the JSON reports of both are the same, and again after a refold of each; a second run copies nothing"
    )
    func migrateData() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let env = try TemporaryDatabase()
        let app = "com.example.notes"
        // Raw copies deflated against a dictionary (SQLite only) are copied over as documents.
        let compaction = try await Lifeline.simulatedAndCompacted(env, app: app, devices: 25, days: 3)
        #expect((compaction["total_compacted"] as? Int ?? 0) > 40, "\(compaction)")

        let migrated = try await Lifeline.run(["migrate", "--db", url])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("schema at migration"), "\(migrated.stdout)")
        let copied = try await Lifeline.run(["migrate-data", "--from", env.path, "--to", url, "--batch", "40"])
        #expect(copied.status == 0, "\(copied.stderr)")
        let count = try #require(
            copied.stdout.split(separator: ",").first?.split(separator: " ").last.flatMap { Int($0) })
        #expect(count > 75, "\(copied.stdout)")
        #expect(copied.stdout.contains("refused: 0"), "\(copied.stdout)")
        let again = try await Lifeline.run(["migrate-data", "--from", env.path, "--to", url])
        #expect(again.stdout.contains("documents copied: 0, already there: \(count)"), "\(again.stdout)")

        func canonical(_ value: Any) throws -> String {
            String(
                decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]),
                as: UTF8.self)
        }
        func report(_ db: String) async throws -> [String: Any] {
            let run = try await Lifeline.run([
                "report", "--db", db, "--app", app, "--from", "2026-09-28", "--to", "2026-10-05", "--format", "json",
                "--out", "-",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            var json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            json["generated_at"] = nil
            // Crash group ids are each store's own.
            json["top_crashes"] = try (json["top_crashes"] as? [[String: Any]])?.map { crash -> String in
                var crash = crash
                crash["id"] = nil
                return try canonical(crash)
            }.sorted()
            return json
        }
        let sqlite = try await report(env.path)
        let postgres = try await report(url)
        #expect(Set(sqlite.keys) == Set(postgres.keys))
        for key in sqlite.keys.sorted() {
            #expect(try canonical(sqlite[key] ?? NSNull()) == canonical(postgres[key] ?? NSNull()), "section \(key)")
        }
        // `lifeline refold` on either store rebuilds the same figures.
        for db in [env.path, url] {
            let refolded = try await Lifeline.run(["refold", "--db", db, "--json"])
            #expect(refolded.status == 0, "\(refolded.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(refolded.stdout.utf8)) as? [String: Any]
            #expect((json?["documents"] as? Int ?? 0) > 40, "\(refolded.stdout)")
            #expect(json?["unreadable"] as? Int == 0, "\(refolded.stdout)")
        }
        let (sqliteAgain, postgresAgain) = (try await report(env.path), try await report(url))
        for key in sqlite.keys.sorted() {
            #expect(
                try canonical(sqliteAgain[key] ?? NSNull()) == canonical(sqlite[key] ?? NSNull()), "refolded \(key)")
            #expect(
                try canonical(postgresAgain[key] ?? NSNull()) == canonical(postgres[key] ?? NSNull()), "refolded \(key)"
            )
        }
        // The password never shows: a URL with one is printed without it.
        let withPassword = url.replacingOccurrences(of: "lifeline@", with: "lifeline:s3cret@")
        let status = try await Lifeline.run(["migrate", "--db", withPassword])
        #expect(!status.stdout.contains("s3cret") && !status.stderr.contains("s3cret"))
    }

    @Test(
        "two serve nodes on one PostgreSQL: one killed with SIGKILL under load, every acknowledged document stored once; the survivor becomes leader"
    )
    func twoNodesAndAKill() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let (token, read) = try await Self.keys(url, app: "com.example.app")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let config = try directory.write(
            "unlimited.yaml", "limits:\n  ingest_rate_per_key: 0\n  ingest_rate_per_ip: 0\n")
        let nodes = [
            try Lifeline.Server(database: url, extra: ["--config", config]),
            try Lifeline.Server(database: url, extra: ["--config", config]),
        ]
        for node in nodes { try await node.waitUntilReady() }

        func leaders() async throws -> [Bool?] { await Self.leaders(nodes) }
        var deadline = ContinuousClock.now + .seconds(10)
        while try await leaders().filter({ $0 == true }).count != 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let roles = try await leaders()
        #expect(roles.filter { $0 == true }.count == 1, "exactly one leader: \(roles)")
        let victim = roles.firstIndex(of: true) ?? 0
        let survivor = 1 - victim

        // 8 clients, half on each node, post distinct documents; the leader is killed mid-flight.
        let acknowledged = CrashRecoveryTests.Acknowledged()
        let stop = StopFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                let port = nodes[client % 2].port
                group.addTask {
                    try? await TestClient.withClient(host: "127.0.0.1", port: port) { http in
                        for n in 0..<100_000 where !stop.value.load(ordering: .relaxed) {
                            let index = client * 100_000 + n
                            let response = try await http.post(
                                "/v1/metrics", headers: ingestHeaders(token, gzip: true),
                                body: try gzip(metricPayload(index: index)))
                            guard response.status == .accepted, let body = response.body,
                                let ids = try json(body)["ids"] as? [Int], ids.count == 1
                            else { return }
                            acknowledged.record(index, ids[0])
                        }
                    }
                }
            }
            group.addTask {
                while acknowledged.snapshot.count < 400 { try await Task.sleep(for: .milliseconds(20)) }
                nodes[victim].kill(SIGKILL)
                // The other node's clients go on a little while the lead changes hands.
                try await Task.sleep(for: .milliseconds(500))
                stop.value.store(true, ordering: .relaxed)
            }
            try await group.waitForAll()
        }
        #expect(await nodes[victim].wait() == SIGKILL)
        let before = acknowledged.snapshot
        #expect(before.count >= 400)

        // The survivor takes the lead within seconds.
        deadline = ContinuousClock.now + .seconds(10)
        while try await leaders()[survivor] != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await leaders()[survivor] == true)

        // Every acknowledged document, posted again to the survivor, is a duplicate with its id.
        try await TestClient.withClient(host: "127.0.0.1", port: nodes[survivor].port) { http in
            for (index, id) in before.sorted(by: { $0.key < $1.key }) {
                let response = try await http.post(
                    "/v1/metrics", headers: ingestHeaders(token, gzip: true),
                    body: try gzip(metricPayload(index: index)))
                let answer = try json(response.body ?? ByteBuffer())
                #expect(answer["duplicates"] as? Int == 1, "document \(index) was lost")
                #expect(answer["ids"] as? [Int] == [id])
            }
            // /metrics says which node leads.
            let scrape = try await http.get("/metrics", headers: [.authorization: "Bearer \(read)"])
            #expect(String(buffer: scrape.body ?? ByteBuffer()).contains("lifeline_leader 1"))
        }
        // Stored once: the rows equal the distinct documents (acknowledged, or committed unanswered).
        let store = try PostgresStore(url: url)
        let stored = try await store.read { try await $0.apps() }.first?.metricPayloads ?? 0
        #expect(stored >= Int64(before.count))
        let rows = try await store.read { reader in
            try await reader.usage(Scope(app: "com.example.app", days: DayRange(from: "2000-01-01", to: "2100-01-01")))
        }
        #expect(rows.first?.payloads == stored)
        await store.shutdown()
        nodes[survivor].kill(SIGTERM)
        #expect(await nodes[survivor].wait() == 0, "graceful shutdown exits 0")
    }
    @Test(
        "two serve nodes on one PostgreSQL: an alert is delivered once, and not again when the leader is killed and the other takes over"
    )
    func oneDeliveryAcrossTakeover() async throws {
        guard let server = PostgresServer.running() else { return }
        let url = try server.createDatabase()
        let app = "com.example.app"
        let (token, read) = try await Self.keys(url, app: app)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let received = ReceivedRequests()
        try await RecordingReceiver.application(received).test(.live) { receiver in
            let port = try #require(receiver.port)
            let rules = try directory.write(
                "rules.yaml",
                """
                evaluation_interval: 1s
                groups:
                  - name: restoration
                    rules:
                      - name: restoration_error_rate
                        query: restoration_error_rate
                        op: ">"
                        threshold: 0.01
                        window: 2d
                        min_samples: 50
                receivers:
                  - name: hook
                    webhook: {url: "http://127.0.0.1:\(port)/hook"}
                  - name: am
                    alertmanager: {url: "http://127.0.0.1:\(port)/am"}
                route:
                  receiver: hook
                  routes:
                    - receiver: am
                      continue: true
                    - receiver: hook
                """)
            let nodes = [
                try Lifeline.Server(database: url, extra: ["--rules", rules]),
                try Lifeline.Server(database: url, extra: ["--rules", rules]),
            ]
            for node in nodes { try await node.waitUntilReady() }
            // Today's restoration error rate is 5 %: the rule fires on its first evaluation.
            let today = UTCDay.today.string
            let payload = """
                {"appVersion": "4.2.0", "timeStampBegin": "\(today) 00:00:00 +0000",
                 "timeStampEnd": "\(today) 23:59:00 +0000",
                 "metaData": {"bundleIdentifier": "\(app)", "appBuildVersion": "1",
                   "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": "iPhone15,2", "regionFormat": "US",
                   "platformArchitecture": "arm64e"},
                 "signpostMetrics": [
                   {"signpostCategory": "StateRestoration", "signpostName": "RestoreAttempt", "totalSignpostCount": 100},
                   {"signpostCategory": "StateRestoration", "signpostName": "RestoreFailed", "totalSignpostCount": 5}]}
                """
            try await TestClient.withClient(host: "127.0.0.1", port: nodes[0].port) { http in
                let response = try await http.post(
                    "/v1/metrics", headers: ingestHeaders(token), body: ByteBuffer(string: payload))
                #expect(response.status == .accepted)
            }
            func settle(_ seconds: Int, until done: () -> Bool) async throws {
                let deadline = ContinuousClock.now + .seconds(seconds)
                while !done(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            }
            func leader() async -> Int? { await Self.leaders(nodes).firstIndex(of: true) }
            try await settle(15) { received.bodies(path: "/hook").count >= 1 }
            // Several evaluations on the leader: Alertmanager hears the alert again each time, the
            // webhook once.
            let beforeKill = received.bodies(path: "/am/api/v2/alerts").count
            try await settle(10) { received.bodies(path: "/am/api/v2/alerts").count >= beforeKill + 3 }
            #expect(received.bodies(path: "/hook").count == 1)
            let victim = try #require(await leader())
            let survivor = 1 - victim
            nodes[victim].kill(SIGKILL)
            #expect(await nodes[victim].wait() == SIGKILL)
            let deadline = ContinuousClock.now + .seconds(15)
            while await leader() != survivor, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(await leader() == survivor)
            // The new leader evaluates (Alertmanager re-sends go on) from the stored state: the
            // webhook is not told again.
            let atTakeover = received.bodies(path: "/am/api/v2/alerts").count
            try await settle(15) { received.bodies(path: "/am/api/v2/alerts").count >= atTakeover + 3 }
            #expect(received.bodies(path: "/am/api/v2/alerts").count >= atTakeover + 3)
            #expect(received.bodies(path: "/hook").count == 1, "one webhook delivery across the takeover")
            let hook = try #require(received.bodies(path: "/hook").first)
            let delivered = try #require(try JSONSerialization.jsonObject(with: hook) as? [String: Any])
            #expect(delivered["status"] as? String == "firing")
            // Both nodes list the alert, firing since the first leader fired it.
            try await TestClient.withClient(host: "127.0.0.1", port: nodes[survivor].port) { http in
                let alerts = try json(
                    try await http.get("/v1/alerts", headers: [.authorization: "Bearer \(read)"]).body ?? ByteBuffer())
                let listed = try #require(alerts["alerts"] as? [[String: Any]])
                #expect(listed.count == 1)
                #expect(listed.first?["state"] as? String == "firing")
            }
            nodes[survivor].kill(SIGTERM)
            #expect(await nodes[survivor].wait() == 0)
        }
    }
}

/// Tells load clients to stop.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
