import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// Every endpoint × every kind of credential, on one live server: who gets in, and what an
/// app-scoped read key sees once in.
@Suite("Access matrix")
struct AccessMatrixTests {
    static let notes = HostileInputTests.notes
    static let meter = HostileInputTests.meter

    enum Credential: String, CaseIterable {
        case none, unknown, revoked, expired, ingest, readAll, readNotes, readMeter, admin
    }

    /// Expected statuses, in ``Credential/allCases`` order.
    struct Row {
        var method: HTTPRequest.Method
        var path: String
        var body: String?
        var expected: [Int]
    }

    static let window = "from=2026-10-01&to=2026-11-30"
    static let rules = """
        evaluation_interval: 60s
        groups:
          - name: notes
            app: \(notes)
            rules:
              - {name: notes_exits, query: 'exit_rate{state="foreground"}', op: ">", threshold: 1000000, window: 1d}
          - name: meter
            app: \(meter)
            rules:
              - {name: meter_crashes, query: new_crash_groups, op: ">", threshold: 1000000, window: 1d}
        receivers:
          - name: ops-webhook
            webhook: {url: "http://127.0.0.1:9/hook"}
        """

    static var matrix: [Row] {
        //                         none unkn revk expd ingst readA readN readM admin
        let reader = [401, 401, 401, 401, 403, 200, 200, 403, 403]
        var rows = [
            Row(method: .get, path: "/v1/apps", expected: [401, 401, 401, 401, 403, 200, 200, 200, 403]),
            Row(method: .get, path: "/v1/alerts", expected: [401, 401, 401, 401, 403, 200, 200, 200, 403]),
            Row(method: .get, path: "/v1/rules", expected: [401, 401, 401, 401, 403, 200, 200, 200, 403]),
            Row(method: .get, path: "/metrics", expected: [401, 401, 401, 401, 403, 200, 200, 200, 200]),
            Row(
                method: .get, path: "/v1/apps/\(notes)/crashes/999999?\(window)",
                expected: [401, 401, 401, 401, 403, 404, 404, 403, 403]),
            Row(
                method: .post, path: "/v1/metrics",
                body: String(decoding: metricPayload(index: 77, bundle: notes), as: UTF8.self),
                expected: [401, 401, 401, 401, 202, 403, 403, 403, 403]),
            Row(
                method: .post, path: "/v1/diagnostics",
                body: #"{"timeStampBegin":"2026-10-21 00:00:00 +0000","timeStampEnd":"2026-10-21 00:00:00 +0000"}"#,
                expected: [401, 401, 401, 401, 202, 403, 403, 403, 403]),
            Row(method: .post, path: "/-/reload", expected: [401, 401, 401, 401, 403, 403, 403, 403, 200]),
            // The dashboard answers the login form to nobody, 401 to a key that may not read.
            Row(method: .get, path: "/?\(window)", expected: [200, 401, 401, 401, 401, 200, 200, 200, 200]),
        ]
        for endpoint in [
            "summary", "exits", "signposts", "expiration-handlers", "restoration", "launch", "hangs", "crashes",
        ] {
            rows.append(Row(method: .get, path: "/v1/apps/\(notes)/\(endpoint)?\(window)", expected: reader))
        }
        return rows
    }

    @Test("every endpoint answers every kind of key as the README's Security section says")
    func everyEndpointEveryKey() async throws {
        try await HostileInputTests.withServer(rules: Self.rules) { client, env in
            let database = env.database
            let revoked = try database.createKey(role: .read, app: nil)
            #expect(try database.revokeKey(id: revoked.key.id))
            let now = Int64(Date().timeIntervalSince1970)
            let expired = try database.createKey(role: .read, app: nil, expiresAt: now + 1, now: now - 10)
            let tokens: [Credential: String] = [
                .unknown: "ll_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                .revoked: revoked.token,
                .expired: expired.token,
                .ingest: try env.token(.ingest, app: Self.notes),
                .readAll: try env.token(.read),
                .readNotes: try env.token(.read, app: Self.notes),
                .readMeter: try env.token(.read, app: Self.meter),
                .admin: try env.token(.admin),
            ]
            try await Task.sleep(for: .seconds(1.1))  // the expiring key is past its time now
            var failures: [String] = []
            for row in Self.matrix {
                for (index, credential) in Credential.allCases.enumerated() {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let token = tokens[credential] { headers[.authorization] = "Bearer \(token)" }
                    let response = try await client.execute(
                        uri: row.path, method: row.method, headers: headers,
                        body: row.body.map { ByteBuffer(string: $0) })
                    if Int(response.status.code) != row.expected[index] {
                        failures.append(
                            "\(row.method) \(row.path) as \(credential): \(response.status.code), expected \(row.expected[index])"
                        )
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }

    @Test("an app-scoped read key sees only its app in the apps list, /metrics, /v1/rules and /v1/alerts")
    func scopedKeySeesOnlyItsApp() async throws {
        try await HostileInputTests.withServer(rules: Self.rules) { client, env in
            let meterIngest = try env.token(.ingest, app: Self.meter)
            let crash = try await client.execute(
                uri: "/v1/diagnostics", method: .post, headers: ingestHeaders(meterIngest, gzip: true),
                body: try gzip(try Paths.fixture("diagnostics/ChimeHQ_Meter__real_report.json")))
            #expect(crash.status == .accepted, "\(String(buffer: crash.body))")
            let all = try env.token(.read)
            let scoped = try env.token(.read, app: Self.notes)

            let apps = try json(try await HostileInputTests.get(client, "/v1/apps", scoped).body)
            let bundles = (apps["apps"] as? [[String: Any]])?.compactMap { $0["bundle_id"] as? String }
            #expect(bundles == [Self.notes])
            let allApps = try json(try await HostileInputTests.get(client, "/v1/apps", all).body)
            #expect((allApps["apps"] as? [[String: Any]])?.count == 2)

            let metrics = String(buffer: try await HostileInputTests.get(client, "/metrics", scoped).body)
            #expect(metrics.contains("app=\"\(Self.notes)\""))
            #expect(!metrics.contains(Self.meter))
            #expect(!metrics.contains("lifeline_http_requests_total"))
            #expect(!metrics.contains("meter_crashes") && !metrics.contains("ops-webhook"))
            let allMetrics = String(buffer: try await HostileInputTests.get(client, "/metrics", all).body)
            #expect(allMetrics.contains("meter_crashes") && allMetrics.contains("lifeline_http_requests_total"))

            let rules = try json(try await HostileInputTests.get(client, "/v1/rules", scoped).body)
            #expect((rules["rules"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["notes_exits"])
            #expect((rules["receivers"] as? [Any])?.isEmpty == true)
            let allRules = try json(try await HostileInputTests.get(client, "/v1/rules", all).body)
            #expect((allRules["rules"] as? [[String: Any]])?.count == 2)
            #expect((allRules["receivers"] as? [Any])?.count == 1)

            let alerts = String(buffer: try await HostileInputTests.get(client, "/v1/alerts", scoped).body)
            #expect(!alerts.contains(Self.meter))
        }
    }
}
