import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import Testing

/// iOS 27 reports over HTTP: the real captures of `ios27/` are accepted on the usual endpoints and
/// answer on the usual queries, with app states as a new dimension.
@Suite("iOS 27 reports over HTTP")
struct ReportsV2Tests {
    static let app = "com.hitchscope"
    static let window = "from=2026-09-01&to=2026-09-30"
    static let metrics = [
        "ios27/HitchScope__metric-20260913T053136.820.json", "ios27/HitchScope__metric-20260913T053136.822.json",
    ]
    static let diagnostics = [
        "ios27/HitchScope__diagnostic-20260912T110745.770.json",
        "ios27/HitchScope__diagnostic-20260912T110757.564.json",
        "ios27/HitchScope__diagnostic-20260912T172435.024.json",
    ]

    /// Posts every capture (gzip) to its endpoint, then runs `body` with a read key.
    func withCaptures(
        _ body: @Sendable (any TestClientProtocol, String, TemporaryDatabase) async throws -> Void
    ) async throws {
        let env = try TemporaryDatabase()
        let ingest = try env.token(.ingest, app: Self.app)
        let read = try env.token(.read)
        try await TemporaryDatabase.withLiveServer(env.config()) { client async throws in
            for (files, path) in [(Self.metrics, "/v1/metrics"), (Self.diagnostics, "/v1/diagnostics")] {
                for file in files {
                    let response = try await client.execute(
                        uri: path, method: .post, headers: ingestHeaders(ingest, gzip: true),
                        body: try gzip(try Paths.fixture(file)))
                    #expect(response.status == .accepted, "\(file): \(String(buffer: response.body))")
                }
            }
            try await body(client, read, env)
        }
    }

    func get(_ client: any TestClientProtocol, _ uri: String, _ token: String) async throws -> [String: Any] {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
        return try json(response.body)
    }

    static func count(_ rows: [[String: Any]], _ state: String, _ reason: String) -> Int? {
        rows.first { $0["state"] as? String == state && $0["reason"] as? String == reason }?["count"] as? Int
    }

    @Test("every capture is accepted; exits by mapped reason, device-days without the snapshot, hang samples")
    func sameModel() async throws {
        try await withCaptures { client, read, env in
            #expect(try env.database.payloadCount(app: Self.app, kind: .metric) == 2)
            #expect(try env.database.payloadCount(app: Self.app, kind: .diagnostic) == 3)
            let exits = try await get(client, "/v1/apps/\(Self.app)/exits?\(Self.window)&group_by=version", read)
            let rows = try #require(exits["rows"] as? [[String: Any]])
            #expect(Self.count(rows, "foreground", "MemoryResourceLimit") == 8)
            #expect(Self.count(rows, "foreground", "NormalApp") == 6)
            #expect(Self.count(rows, "background", "MemoryPressure") == 1)
            // The disk-space snapshot (a zero-length report) is stored but is not a device-day.
            #expect(rows.allSatisfy { $0["device_days"] as? Int == 1 })
            #expect(rows.first?["version"] as? String == "1.0")
            let summary = try await get(client, "/v1/apps/\(Self.app)/summary?\(Self.window)", read)
            #expect(summary["device_days"] as? Int == 1)
            let hangs = try await get(client, "/v1/apps/\(Self.app)/hangs?\(Self.window)&group_by=", read)
            let hang = try #require((hangs["rows"] as? [[String: Any]])?.first)
            #expect(hang["samples"] as? Int == 291)
            let os = try await get(
                client, "/v1/apps/\(Self.app)/exits?\(Self.window)&os=iPhone%20OS%2027.0%20(24A435)&group_by=", read)
            #expect(Self.count(try #require(os["rows"] as? [[String: Any]]), "foreground", "MemoryResourceLimit") == 8)
        }
    }

    @Test("group_by=app_state and the app_state filter answer per state, metadata included")
    func appStates() async throws {
        try await withCaptures { client, read, _ in
            let byState = try await get(client, "/v1/apps/\(Self.app)/exits?\(Self.window)&group_by=app_state", read)
            let rows = try #require(byState["rows"] as? [[String: Any]])
            let premium = rows.filter {
                $0["app_state_domain"] as? String == "com.hitchscope.example.screen"
                    && $0["app_state_label"] as? String == "home"
                    && ($0["app_state_metadata"] as? [String: Any])?["userTier"] as? String == "premium"
            }
            #expect(Self.count(premium, "foreground", "MemoryResourceLimit") == 2)
            #expect(Self.count(premium, "foreground", "NormalApp") == 1)
            #expect(Self.count(premium, "background", "MemoryPressure") == 1)
            #expect(premium.first?["device_days"] as? Int == 1)
            // The plain home state (no metadata) has no terminations of its own.
            #expect(
                !rows.contains {
                    $0["app_state_label"] as? String == "home"
                        && ($0["app_state_metadata"] as? [String: Any])?.isEmpty == true
                })
            let arm = try await get(
                client,
                "/v1/apps/\(Self.app)/exits?\(Self.window)&group_by=&app_state=com.hitchscope.example.experiment.checkout_redesign/variant_b",
                read)
            #expect(Self.count(try #require(arm["rows"] as? [[String: Any]]), "foreground", "MemoryResourceLimit") == 2)
            let hangs = try await get(client, "/v1/apps/\(Self.app)/hangs?\(Self.window)&group_by=app_state", read)
            let hangRows = try #require(hangs["rows"] as? [[String: Any]])
            #expect(hangRows.contains { $0["app_state_label"] as? String == "variant_b" && $0["samples"] as? Int == 2 })
            let bad = try await client.execute(
                uri: "/v1/apps/\(Self.app)/exits?app_state=nolabel", method: .get,
                headers: [.authorization: "Bearer \(read)"])
            #expect(bad.status == .badRequest)
            #expect(errorCode(bad.body) == "invalid_parameter")
        }
    }

    @Test("diagnostics: a memory-exception group with named frames and the 2.0.0 sample fields")
    func diagnosticGroups() async throws {
        try await withCaptures { client, read, _ in
            let crashes = try await get(client, "/v1/apps/\(Self.app)/crashes?\(Self.window)", read)
            let groups = try #require(crashes["groups"] as? [[String: Any]])
            #expect(Set(groups.compactMap { $0["kind"] as? String }) == ["crash", "memory_exception"])
            let memory = try #require(groups.first { $0["kind"] as? String == "memory_exception" })
            let id = try #require(memory["id"] as? Int)
            let detail = try await get(client, "/v1/apps/\(Self.app)/crashes/\(id)?\(Self.window)", read)
            let stack = try #require(detail["sample_stack"] as? [[String: Any]])
            #expect(!stack.isEmpty)
            #expect(stack.allSatisfy { ($0["binary_name"] as? String)?.isEmpty == false })
            #expect((detail["pid"] as? Int).map { [3_845, 4_635].contains($0) } == true)
            let crash = try #require(groups.first { $0["kind"] as? String == "crash" })
            let crashDetail = try await get(
                client, "/v1/apps/\(Self.app)/crashes/\(try #require(crash["id"] as? Int))?\(Self.window)", read)
            #expect(crashDetail["termination_reason"] as? String == "Namespace SIGNAL, Code 0x5")
            #expect(crashDetail["signal_name"] as? String == "SIGTRAP")
            #expect(crashDetail["signpost_data"] is [Any])
            let byState = try await get(
                client, "/v1/apps/\(Self.app)/crashes?\(Self.window)&app_state=com.hitchscope.example.screen/home", read
            )
            let stateGroups = try #require(byState["groups"] as? [[String: Any]])
            #expect(stateGroups.map { $0["kind"] as? String } == ["memory_exception"])
        }
    }

    @Test("a body mixing a legacy payload and a 2.0.0 report is one request, both stored")
    func mixedBody() async throws {
        let env = try TemporaryDatabase()
        let ingest = try env.token(.ingest, app: Self.app)
        let legacy = String(decoding: try Paths.fixture("metrics/lifeline-authored__ios17-full.json"), as: UTF8.self)
            .replacingOccurrences(of: "com.example.notes", with: Self.app)
        let report = String(decoding: try Paths.fixture(Self.metrics[1]), as: UTF8.self)
        try await TemporaryDatabase.withLiveServer(env.config()) { client async throws in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest),
                body: ByteBuffer(string: "[\(legacy),\(report)]"))
            #expect(response.status == .accepted, "\(String(buffer: response.body))")
            #expect(try json(response.body)["accepted"] as? Int == 2)
        }
        #expect(
            try env.database.query("SELECT format, count(*) FROM payloads GROUP BY format ORDER BY format")
                == [[.text("legacy"), .integer(1)], [.text("v2"), .integer(1)]])
    }

    @Test("rules test fires an exit rule on 2.0.0 data")
    func ruleOnReports() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let directory = env.directory.url.appendingPathComponent("payloads")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in Self.metrics + Self.diagnostics {
            try Paths.fixture(file).write(
                to: directory.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent))
        }
        let rules = try env.write(
            "rules.yaml",
            """
            groups:
              - name: ios27
                rules:
                  - name: memory_limit_terminations
                    query: exits{state="foreground",reason="MemoryResourceLimit"}
                    op: ">"
                    threshold: 5
                    window: 2d
                    group_by: [version]
                    for: 0s
                    min_samples: 1
            """)
        let result = try await Lifeline.run([
            "rules", "test", rules, "--payloads", directory.path, "--at", "2026-09-13T12:00:00Z", "--app", Self.app,
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains(
                #"FIRING  memory_limit_terminations{alertname="memory_limit_terminations", app="com.hitchscope", version="1.0"} value 8"#
            ), "\(result.stdout)")
    }

    @Test("offline ingest of the captures and a report with its by-app-state section")
    func reportByAppState() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let files = (Self.metrics + Self.diagnostics).map { Paths.fixtures.appendingPathComponent($0).path }
        let ingested = try await Lifeline.run(["ingest", "--db", env.path, "--app", Self.app] + files)
        #expect(ingested.status == 0, "\(ingested.stderr)")
        #expect(ingested.stdout.contains("documents accepted: 5, duplicates: 0"), "\(ingested.stdout)")
        let out = env.directory.url.appendingPathComponent("report.md").path
        let report = try await Lifeline.run([
            "report", "--db", env.path, "--app", Self.app, "--from", "2026-09-01", "--to", "2026-09-30", "--format",
            "md", "--out", out,
        ])
        #expect(report.status == 0, "\(report.stderr)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("## By app state (iOS 27 reports)"))
        #expect(
            text.contains(
                #"| com.hitchscope.example.screen/home \{"userTier":"premium"\} | foreground | MemoryResourceLimit | 2 |"#
            ))
        #expect(text.contains("MemoryResourceLimit"))
    }
}
