import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineReport
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// Issue 11's findings, each replayed against a real server on 127.0.0.1.
@Suite("Hostile input over HTTP")
struct HostileInputTests {
    static let notes = "com.example.notes"
    static let meter = "com.example.meter"

    /// A live server with the notes fixtures ingested; `body` gets the client and the environment.
    static func withServer(
        rules: String? = nil,
        _ body: @Sendable (any TestClientProtocol, TemporaryDatabase) async throws -> Void
    ) async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        var config = env.config()
        if let rules {
            let path = env.directory.url.appendingPathComponent("rules.yaml")
            try Data(rules.utf8).write(to: path)
            config.rulesPath = path.path
        }
        let ingest = try env.token(.ingest, app: notes)
        try await TemporaryDatabase.withLiveServer(config) { client in
            for file in [
                "metrics/lifeline-authored__ios17-full.json", "metrics/lifeline-authored__sparse-zoneless.json",
            ] {
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest, gzip: true),
                    body: try gzip(try Paths.fixture(file)))
                #expect(response.status == .accepted)
            }
            try await body(client, env)
        }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, _ token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    static func message(_ response: TestResponse) -> String {
        ((try? json(response.body))?["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    @Test("an exit count of Int64.max is dropped and counted; /summary, /exits and the report still answer")
    func int64MaxExitCountDoesNotCrashLoop() async throws {
        try await Self.withServer { client, env in
            let ingest = try env.token(.ingest, app: Self.notes)
            let read = try env.token(.read)
            let text = """
                {"timeStampBegin":"2026-10-21 00:00:00 +0000","timeStampEnd":"2026-10-21 23:59:00 +0000",
                 "metaData":{"bundleIdentifier":"\(Self.notes)","appBuildVersion":"1","osVersion":"iPhone OS 17.4 (21E219)",
                 "deviceType":"iPhone15,2","platformArchitecture":"arm64e","regionFormat":"US"},"appVersion":"9.9.9",
                 "applicationExitMetrics":{"foregroundExitData":{"cumulativeNormalAppExitCount":9223372036854775807,
                 "cumulativeAppWatchdogExitCount":1},"backgroundExitData":{"cumulativeMemoryPressureExitCount":10000000000000000}},
                 "applicationResponsivenessMetrics":{"histogrammedAppHangTime":{"histogramNumBuckets":1,
                 "histogramValue":{"0":{"bucketStart":"0 ms","bucketEnd":"100000000000000000000 ms","bucketCount":3}}}}}
                """
            let posted = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest), body: ByteBuffer(string: text))
            #expect(posted.status == .accepted, "\(String(buffer: posted.body))")
            let dropped = try env.database.query("SELECT dropped_values FROM payloads WHERE dropped_values > 0")
            #expect(dropped == [[.integer(3)]])

            let window = "from=2026-10-01&to=2026-11-30"
            let summary = try await Self.get(client, "/v1/apps/\(Self.notes)/summary?\(window)", read)
            #expect(summary.status == .ok, "\(String(buffer: summary.body))")
            let exits = try await Self.get(client, "/v1/apps/\(Self.notes)/exits?\(window)&version=9.9.9", read)
            let rows = try #require((try json(exits.body))["rows"] as? [[String: Any]])
            #expect(rows.map { $0["reason"] as? String } == ["AppWatchdog"])
            #expect(rows.allSatisfy { ($0["count"] as? Int ?? -1) >= 0 })
            for uri in ["hangs", "launch", "expiration-handlers", "restoration", "crashes"] {
                let response = try await Self.get(client, "/v1/apps/\(Self.notes)/\(uri)?\(window)", read)
                #expect(response.status == .ok, "\(uri)")
                #expect(
                    !String(buffer: response.body).contains("NaN")
                        && !String(buffer: response.body).contains("Infinity"))
            }
            let dashboard = try await Self.get(client, "/?app=\(Self.notes)&\(window)", read)
            #expect(dashboard.status == .ok)
        }
    }

    @Test("query parameters are parsed once: dates, +, percent-encoding, repeats and ranges are checked")
    func queryParametersAtTheEdge() async throws {
        try await Self.withServer { client, env in
            let read = try env.token(.read)
            let base = "/v1/apps/\(Self.notes)"
            // Used to kill the process: the default `from` of year 0 was not a date.
            for uri in ["exits?to=0000-01-05", "summary?to=0000-01-05", "hangs?to=1999-12-31"] {
                let response = try await Self.get(client, "\(base)/\(uri)", read)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(Self.message(response).hasPrefix("to: "), "\(Self.message(response))")
            }
            let earliest = try await Self.get(client, "\(base)/exits?to=2000-01-05", read)
            #expect(earliest.status == .ok)
            #expect(((try json(earliest.body))["window"] as? [String: Any])?["from"] as? String == "2000-01-01")
            for uri in [
                "exits?from=2026-+1-01", "exits?from=+026-01-01", "exits?from=2026-01-01&from=2026-01-02",
                "crashes?limit=1e3", "crashes?limit=-1", "exits?from=%ZZ", "exits?group_by=version,planet",
                "exits?from=2026-11-30&to=2026-10-01", "exits?from=2010-01-01&to=2026-10-01",
            ] {
                let response = try await Self.get(client, "\(base)/\(uri)", read)
                #expect(response.status == .badRequest, "\(uri): \(String(buffer: response.body))")
                #expect(errorCode(response.body) == "invalid_parameter")
            }
            // `+` is a space and %XX is decoded, as browsers and curl --data-urlencode send them.
            let window = "from=2026-10-01&to=2026-11-30"
            let plus = try await Self.get(client, "\(base)/exits?\(window)&os=iPhone+OS+17.4+(21E219)", read)
            let percent = try await Self.get(client, "\(base)/exits?\(window)&os=iPhone%20OS%2017.4%20(21E219)", read)
            let plusRows = try #require((try json(plus.body))["rows"] as? [[String: Any]])
            #expect(!plusRows.isEmpty)
            #expect((try json(plus.body) as NSDictionary) == (try json(percent.body) as NSDictionary))
            // A percent-encoded path segment names the same app.
            let encoded = try await Self.get(client, "/v1/apps/com%2Eexample%2Enotes/exits?\(window)", read)
            #expect(encoded.status == .ok)
        }
    }

    @Test("a known path with the wrong method is 405 with Allow; an unknown path stays 404")
    func wrongMethodIs405() async throws {
        try await Self.withServer { client, env in
            let read = try env.token(.read)
            let headers: HTTPFields = [.authorization: "Bearer \(read)"]
            let wrong = try await client.execute(uri: "/v1/metrics", method: .get, headers: headers)
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers[.allow] == "POST")
            #expect(errorCode(wrong.body) == "method_not_allowed")
            let query = try await client.execute(
                uri: "/v1/apps/\(Self.notes)/exits", method: .delete, headers: headers)
            #expect(query.status == .methodNotAllowed && query.headers[.allow] == "GET")
            let unknown = try await client.execute(uri: "/v1/nothing", method: .get, headers: headers)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("an Idempotency-Key must be visible ASCII, so its limit is the same in bytes and characters")
    func idempotencyKeyIsASCII() async throws {
        try await Self.withServer { client, env in
            let ingest = try env.token(.ingest, app: Self.notes)
            for key in ["é" + String(repeating: "a", count: 10), "a b", String(repeating: "k", count: 256)] {
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest, idempotencyKey: key),
                    body: ByteBuffer(data: metricPayload(index: 5, bundle: Self.notes)))
                #expect(response.status == .badRequest, "\(key)")
                #expect(errorCode(response.body) == "invalid_idempotency_key")
            }
            let ok = try await client.execute(
                uri: "/v1/metrics", method: .post,
                headers: ingestHeaders(ingest, idempotencyKey: String(repeating: "k", count: 255)),
                body: ByteBuffer(data: metricPayload(index: 5, bundle: Self.notes)))
            #expect(ok.status == .accepted)
        }
    }

    @Test("a key's last use is recorded by the server in a batch (here: the flush on shutdown)")
    func lastUseIsRecorded() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let used = try env.database.createKey(role: .read, app: nil)
        let unused = try env.database.createKey(role: .read, app: nil)
        try await env.withLiveServer { client in
            for _ in 0..<3 {
                let response = try await Self.get(client, "/v1/apps", used.token)
                #expect(response.status == .ok)
            }
        }
        let keys = Dictionary(uniqueKeysWithValues: try env.database.listKeys().map { ($0.id, $0.lastUsedAt) })
        let now = Int64(Date().timeIntervalSince1970)
        #expect((keys[used.key.id] ?? nil).map { abs($0 - now) < 120 } == true)
        #expect(keys[unused.key.id] == .some(nil))
    }

    @Test("a Markdown report escapes names that came from a payload")
    func markdownEscapesPayloadNames() {
        let hostile = "4.2.0](http://evil.example)<img src=x onerror=alert(1)>|`code`*bold*\nnext"
        let escaped = ReportMarkdown.esc(hostile)
        #expect(!escaped.contains("\n"))
        #expect(escaped.contains(#"\]\(http://evil.example\)\<img src=x onerror=alert\(1\)\>\|\`code\`\*bold\*"#))
        let fence = ReportMarkdown.fenced("a ``` b ```` c")
        #expect(fence.hasPrefix("`````\n") && fence.hasSuffix("\n`````\n\n"))
        #expect(ReportMarkdown.table(["h"], [[escaped]]).contains(#"\|"#))
        #expect(!ReportMarkdown.table(["h"], [[escaped]]).contains(#"\\|"#))
    }
}
