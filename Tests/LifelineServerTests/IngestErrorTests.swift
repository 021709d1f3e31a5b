import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

@Suite("Ingest refusals: each error status provoked, JSON body, nothing stored")
struct IngestErrorTests {
    /// Runs `body` against a live server on a fresh database with an ingest key for com.example.app.
    func withServer(
        limits: IngestLimits = .init(), options: Database.Options = .init(),
        _ body: @Sendable (any TestClientProtocol, String, TemporaryDatabase) async throws -> Void
    ) async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let token = try env.token(.ingest, app: "com.example.app")
        try await env.withLiveServer(options: options, limits: limits) { client in try await body(client, token, env) }
    }

    @Test("400 for a body that is not gzip although it says so")
    func malformedGzip() async throws {
        try await withServer { client, token, env in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(response.status == .badRequest)
            #expect(errorCode(response.body) == "malformed_gzip")
            #expect(try env.database.payloadCount(app: "com.example.app", kind: .metric) == 0)
        }
    }

    @Test("400 for malformed JSON, naming where")
    func malformedJSON() async throws {
        try await withServer { client, token, _ in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(string: "{\"appVersion\": \"1.0\",\n  \"metaData\": {]}"))
            #expect(response.status == .badRequest)
            #expect(errorCode(response.body) == "malformed_json")
            let message = try #require((try json(response.body)["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("line 2"), "message should say where: \(message)")
        }
    }

    @Test("401 without a key and with an unknown key")
    func missingOrUnknownKey() async throws {
        try await withServer { client, _, _ in
            let none = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(nil),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(none.status == .unauthorized)
            #expect(errorCode(none.body) == "unauthorized")
            let unknown = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders("ll_nope_notakey"),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(unknown.status == .unauthorized)
        }
    }

    @Test("401 once a key is revoked")
    func revokedKey() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let (key, token) = try env.database.createKey(role: .ingest, app: "com.example.app")
        #expect(try env.database.revokeKey(id: key.id))
        try await env.withLiveServer { client in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(response.status == .unauthorized)
        }
    }

    @Test("403 for a read key, and for a payload of another app")
    func forbidden() async throws {
        try await withServer { client, token, env in
            let readToken = try env.token(.read)
            let read = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(readToken),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(read.status == .forbidden)
            let other = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(bytes: metricPayload(index: 1, bundle: "com.other.app")))
            #expect(other.status == .forbidden)
            #expect(errorCode(other.body) == "forbidden")
            #expect(try env.database.payloadCount(app: "com.example.app", kind: .metric) == 0)
        }
    }

    @Test("413 for a body over the compressed limit")
    func bodyTooLarge() async throws {
        var limits = IngestLimits()
        limits.maxBodyBytes = 1_000
        try await withServer(limits: limits) { client, token, _ in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(response.status == .contentTooLarge)
            #expect(errorCode(response.body) == "body_too_large")
        }
    }

    @Test("413 for a gzip bomb, refused while inflating")
    func gzipBomb() async throws {
        // 64 MiB of spaces compress to about 64 KiB: a ratio near 1000:1.
        let bomb = try gzip(Data(repeating: 0x20, count: 64 << 20))
        #expect(bomb.readableBytes < 200_000)
        try await withServer { client, token, _ in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true), body: bomb)
            #expect(response.status == .contentTooLarge)
            #expect(errorCode(response.body) == "decompressed_too_large")
        }
    }

    @Test("415 for an unsupported Content-Encoding")
    func unsupportedEncoding() async throws {
        try await withServer { client, token, _ in
            var headers = ingestHeaders(token)
            headers[.contentEncoding] = "br"
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: headers, body: ByteBuffer(bytes: metricPayload(index: 1)))
            #expect(response.status == .unsupportedMediaType)
            #expect(errorCode(response.body) == "unsupported_encoding")
        }
    }

    @Test("422 for valid JSON that is not a MetricKit document, or a diagnostic sent as a metric")
    func notMetricKit() async throws {
        try await withServer { client, token, _ in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(string: "{\"hello\": \"world\"}"))
            #expect(response.status == .unprocessableContent)
            #expect(errorCode(response.body) == "not_metrickit")
            let diagnostic = try Paths.fixture("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json")
            let wrongEndpoint = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token), body: ByteBuffer(bytes: diagnostic))
            #expect(wrongEndpoint.status == .unprocessableContent)
        }
    }

    @Test("503 when the store cannot write (disk full), with nothing half-written")
    func diskFull() async throws {
        // Room for the schema and keys, not for a payload with its raw copy and rows.
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let token = try env.token(.ingest, app: "com.example.app")
        // The pages freed by migrations that drop tables would take the payload: compact them away.
        try env.database.execute("VACUUM")
        #expect(try env.database.query("PRAGMA freelist_count") == [[.integer(0)]])
        let pages = Int(try #require(env.database.query("PRAGMA page_count").first?.first?.integer))
        var options = Database.Options()
        options.maxPageCount = pages
        // An unknown key with 200 KB of incompressible text: the raw copy alone needs new pages.
        var noise = [UInt8](repeating: 0, count: 150_000)
        var generator = SystemRandomNumberGenerator()
        for i in noise.indices { noise[i] = UInt8.random(in: 0...255, using: &generator) }
        let padding = "{\"padding\": \"\(Data(noise).base64EncodedString())\","
        let big = Data(padding.utf8) + metricPayload(index: 3).dropFirst()
        try await env.withLiveServer(options: options) { client in
            let response = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token), body: ByteBuffer(bytes: big))
            #expect(response.status == .serviceUnavailable, "\(String(buffer: response.body))")
            #expect(errorCode(response.body) == "database_unavailable")
            #expect(response.headers[.retryAfter] != nil)
        }
        #expect(try env.database.payloadCount(app: "com.example.app", kind: .metric) == 0)
        #expect(try env.database.integrityCheck() == "ok")
    }

    @Test("unknown routes answer a JSON 404")
    func unknownRoute() async throws {
        try await withServer { client, token, _ in
            let response = try await client.execute(
                uri: "/v1/nothing-here", method: .get, headers: ingestHeaders(token))
            #expect(response.status == .notFound)
            #expect(errorCode(response.body) == "not_found")
        }
    }
}
