import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// Figures asserted here are computed by hand from the posted documents.
@Suite("Aggregate query endpoints over a real server, on SQLite and on PostgreSQL")
struct QueryEndpointTests {
    /// Ingests documents through HTTP, then runs `body` with a read token.
    func withIngested(
        _ backend: Backend, _ documents: [(path: String, app: String, body: Data)],
        _ body: @Sendable (any TestClientProtocol, String, TestStore) async throws -> Void
    ) async throws {
        try await TestStore.with(backend) { env in
            try await ingested(env, documents, body)
        }
    }

    private func ingested(
        _ env: TestStore, _ documents: [(path: String, app: String, body: Data)],
        _ body: @Sendable (any TestClientProtocol, String, TestStore) async throws -> Void
    ) async throws {
        var ingest: [String: String] = [:]
        for app in Set(documents.map(\.app)) { ingest[app] = try await env.token(.ingest, app: app) }
        let tokens = ingest
        let read = try await env.token(.read)
        try await env.withLiveServer { client in
            for document in documents {
                let response = try await client.execute(
                    uri: document.path, method: .post, headers: ingestHeaders(tokens[document.app], gzip: true),
                    body: try gzip(document.body))
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
            }
            try await body(client, read, env)
        }
    }

    func get(_ client: any TestClientProtocol, _ uri: String, _ token: String) async throws -> [String: Any] {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
        return try json(response.body)
    }

    static let notes = "com.example.notes"

    static var notesFixtures: [(path: String, app: String, body: Data)] {
        get throws {
            [
                ("/v1/metrics", notes, try Paths.fixture("metrics/lifeline-authored__ios17-full.json")),
                ("/v1/metrics", notes, try Paths.fixture("metrics/lifeline-authored__sparse-zoneless.json")),
            ]
        }
    }

    @Test(
        "exits carry counts, rates per 1,000 device-days and per hour of foreground/background time",
        arguments: Backend.allCases)
    func exitsWithRates(_ backend: Backend) async throws {
        try await withIngested(backend, try Self.notesFixtures) { client, token, _ in
            let body = try await get(
                client, "/v1/apps/\(Self.notes)/exits?from=2026-10-01&to=2026-11-30&group_by=version", token)
            #expect((body["window"] as? [String: Any])?["from"] as? String == "2026-10-01")
            #expect(body["group_by"] as? [String] == ["version"])
            let rows = try #require(body["rows"] as? [[String: Any]])
            func row(_ version: String, _ state: String, _ reason: String) -> [String: Any]? {
                rows.first {
                    $0["version"] as? String == version && $0["state"] as? String == state
                        && $0["reason"] as? String == reason
                }
            }
            let timeouts = try #require(row("4.2.0", "background", "BackgroundTaskAssertionTimeout"))
            #expect(timeouts["count"] as? Int == 2)
            #expect(timeouts["device_days"] as? Int == 1)
            #expect(timeouts["per_1000_device_days"] as? Double == 2000)
            // 5,400 s of background time = 1.5 h.
            let pressure = try #require(row("4.2.0", "background", "MemoryPressure"))
            #expect(abs((pressure["per_hour"] as? Double ?? 0) - 7 / 1.5) < 1e-9)
            // 2,700 s of foreground time = 0.75 h.
            let badAccess = try #require(row("4.2.0", "foreground", "BadAccess"))
            #expect(abs((badAccess["per_hour"] as? Double ?? 0) - 1 / 0.75) < 1e-9)
            // The sparse payload (4.1.3) has only 13 memory-pressure exits and no app time.
            let sparse = try #require(row("4.1.3", "background", "MemoryPressure"))
            #expect(sparse["count"] as? Int == 13)
            #expect(sparse["per_hour"] is NSNull)
            #expect(rows.filter { $0["version"] as? String == "4.1.3" }.count == 1)
        }
    }

    @Test(
        "restoration error rate to the digit and duration percentiles from the attempt histogram",
        arguments: Backend.allCases)
    func restoration(_ backend: Backend) async throws {
        try await withIngested(backend, try Self.notesFixtures) { client, token, _ in
            let body = try await get(
                client, "/v1/apps/\(Self.notes)/restoration?from=2026-10-01&to=2026-11-30", token)
            let rows = try #require(body["rows"] as? [[String: Any]])
            let row = try #require(rows.first { $0["version"] as? String == "4.2.0" })
            #expect(row["attempts"] as? Int == 31)
            #expect(row["failures"] as? Int == 1)
            // To the digit, as written on the wire (1/31 as the shortest round-tripping double).
            let raw = try await client.execute(
                uri: "/v1/apps/\(Self.notes)/restoration?from=2026-10-01&to=2026-11-30", method: .get,
                headers: [.authorization: "Bearer \(token)"])
            #expect(String(buffer: raw.body).contains("\"error_rate\":\(1.0 / 31.0)"), "\(String(buffer: raw.body))")
            #expect(abs((row["error_rate"] as? Double ?? 0) - 1.0 / 31.0) < 1e-15)
            // Buckets 0–50: 20, 51–200: 9, 201–1000: 2. p50: rank 15.5 in the first bucket.
            #expect(abs((row["p50_ms"] as? Double ?? 0) - 38.75) < 1e-9)
            // p95: rank 29.45, 0.45 into the last bucket of 2.
            #expect(abs((row["p95_ms"] as? Double ?? 0) - (201 + 799 * 0.225)) < 1e-9)
        }
    }

    @Test("launch and hang percentiles interpolate inside known buckets", arguments: Backend.allCases)
    func launchAndHangPercentiles(_ backend: Backend) async throws {
        try await withIngested(backend, try Self.notesFixtures) { client, token, _ in
            let launch = try await get(
                client, "/v1/apps/\(Self.notes)/launch?from=2026-10-01&to=2026-11-30&version=4.2.0", token)
            let rows = try #require(launch["rows"] as? [[String: Any]])
            let draw = try #require(rows.first { $0["metric"] as? String == "time_to_first_draw" })
            // 14 in 300–400, 5 in 400–800, 1 in 800–2000.
            #expect(draw["samples"] as? Int == 20)
            #expect(abs((draw["p50_ms"] as? Double ?? 0) - (300 + 100 * 10.0 / 14)) < 1e-9)
            #expect(abs((draw["p95_ms"] as? Double ?? 0) - 800) < 1e-9)
            #expect(abs((draw["p99_ms"] as? Double ?? 0) - 1760) < 1e-9)
            let hangs = try await get(
                client, "/v1/apps/\(Self.notes)/hangs?from=2026-10-01&to=2026-11-30&group_by=", token)
            let hang = try #require((hangs["rows"] as? [[String: Any]])?.first)
            #expect(hang["version"] == nil, "no grouping keys without group_by")
            #expect(abs((hang["p50_ms"] as? Double ?? 0) - (250 + 250 * 2.0 / 3)) < 1e-9)
            #expect(abs((hang["p99_ms"] as? Double ?? 0) - 1960) < 1e-9)
        }
    }

    @Test(
        "an imbalanced expiration handler is flagged beside its assertion timeouts; a balanced one is not",
        arguments: Backend.allCases)
    func expirationHandlers(_ backend: Backend) async throws {
        let app = "com.example.app"
        var documents: [(path: String, app: String, body: Data)] = []
        for i in 0..<2 {
            documents.append(("/v1/metrics", app, metricPayload(index: i, version: "4.2.0", entered: 10, exited: 7)))
            documents.append(
                ("/v1/metrics", app, metricPayload(index: 10 + i, version: "4.1.0", entered: 10, exited: 10)))
        }
        try await withIngested(backend, documents) { client, token, _ in
            let body = try await get(
                client, "/v1/apps/\(app)/expiration-handlers?from=2026-10-01&to=2026-10-31", token)
            let rows = try #require(body["rows"] as? [[String: Any]])
            let bad = try #require(rows.first { $0["version"] as? String == "4.2.0" })
            #expect(bad["handler"] as? String == "SyncExpirationHandler")
            #expect(bad["entered"] as? Int == 20)
            #expect(bad["exited"] as? Int == 14)
            #expect(bad["imbalance"] as? Int == 6)
            #expect(bad["imbalance_ratio"] as? Double == 0.3)
            #expect(bad["flagged"] as? Bool == true)
            #expect(bad["background_task_assertion_timeout_exits"] as? Int == 4)
            let good = try #require(rows.first { $0["version"] as? String == "4.1.0" })
            #expect(good["imbalance"] as? Int == 0)
            #expect(good["flagged"] as? Bool == false)
            let summary = try await get(client, "/v1/apps/\(app)/summary?from=2026-10-01&to=2026-10-31", token)
            #expect(summary["device_days"] as? Int == 4)
            #expect(summary["flagged_handlers"] as? [String] == ["SyncExpirationHandler"])
        }
    }

    @Test(
        "crash groups count each occurrence once, with decoded exception and signal names", arguments: Backend.allCases)
    func crashGroups(_ backend: Backend) async throws {
        let app = "com.chimehq.Meter"
        let report = try Paths.fixture("diagnostics/ChimeHQ_Meter__real_report.json")
        // The same report twice is one delivery; the bare crash below repeats one of its crashes.
        let original = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any])
        let firstCrash = try #require((original["crashDiagnostics"] as? [Any])?.first)
        let repeated = try JSONSerialization.data(withJSONObject: [
            "timeStampBegin": "2020-09-30 09:00:00 +0000", "timeStampEnd": "2020-09-30 09:00:00 +0000",
            "crashDiagnostics": [firstCrash],
        ])
        let documents: [(path: String, app: String, body: Data)] = [
            ("/v1/diagnostics", app, report), ("/v1/diagnostics", app, report), ("/v1/diagnostics", app, repeated),
        ]
        try await withIngested(backend, documents) { client, token, _ in
            let body = try await get(client, "/v1/apps/\(app)/crashes?from=2020-01-01&to=2026-12-31", token)
            let groups = try #require(body["groups"] as? [[String: Any]])
            #expect(groups.count == 2)
            // Most frequent first: the repeated crash twice, the other once; the duplicate delivery not at all.
            #expect(groups.map { $0["count"] as? Int } == [2, 1])
            let names = Set(
                groups.map { "\($0["exception_name"] as? String ?? "?")/\($0["signal_name"] as? String ?? "?")" })
            #expect(names == ["EXC_BREAKPOINT/SIGTRAP", "EXC_BAD_ACCESS/SIGSEGV"])
            let first = try #require(groups.first)
            let id = try #require(first["id"] as? Int)
            let detail = try await get(client, "/v1/apps/\(app)/crashes/\(id)?from=2020-01-01&to=2026-12-31", token)
            let stack = try #require(detail["sample_stack"] as? [[String: Any]])
            #expect(!stack.isEmpty)
            #expect((stack.first?["address"] as? String)?.hasPrefix("0x") == true)
        }
    }

    @Test(
        "bad parameters are 400 naming the parameter; unknown apps 404; keys are checked", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        try await withIngested(backend, try Self.notesFixtures) { client, token, env in
            func call(_ uri: String, _ token: String?) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                return try await client.execute(uri: uri, method: .get, headers: headers)
            }
            let badDate = try await call("/v1/apps/\(Self.notes)/exits?from=2026-13-01", token)
            #expect(badDate.status == .badRequest)
            #expect(
                ((try json(badDate.body))["error"] as? [String: Any])?["message"] as? String
                    == "from: \"2026-13-01\" is not a date YYYY-MM-DD between 2000-01-01 and 9999-12-31")
            let badGroup = try await call("/v1/apps/\(Self.notes)/exits?group_by=planet", token)
            #expect(badGroup.status == .badRequest)
            #expect(String(buffer: badGroup.body).contains("group_by"))
            let reversed = try await call("/v1/apps/\(Self.notes)/exits?from=2026-11-02&to=2026-11-01", token)
            #expect(reversed.status == .badRequest)
            let unknownParameter = try await call("/v1/apps/\(Self.notes)/exits?form=2026-11-01", token)
            #expect(unknownParameter.status == .badRequest)
            #expect(String(buffer: unknownParameter.body).contains("form"))
            let unknownApp = try await call("/v1/apps/com.nobody/exits", token)
            #expect(unknownApp.status == .notFound)
            #expect(errorCode(unknownApp.body) == "unknown_app")
            let noKey = try await call("/v1/apps/\(Self.notes)/exits", nil)
            #expect(noKey.status == .unauthorized)
            let ingestKey = try await env.token(.ingest, app: Self.notes)
            #expect(try await call("/v1/apps/\(Self.notes)/exits", ingestKey).status == .forbidden)
            let otherApp = try await env.token(.read, app: "com.other.app")
            #expect(try await call("/v1/apps/\(Self.notes)/exits", otherApp).status == .forbidden)
            let apps = try await get(client, "/v1/apps", token)
            let listed = try #require(apps["apps"] as? [[String: Any]])
            #expect(listed.first?["bundle_id"] as? String == Self.notes)
            #expect(listed.first?["metric_payloads"] as? Int == 2)
        }
    }
}
