import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineModel
import LifelineServer
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import NIOCore
import Testing

@Suite("Resource governance: rate limits, backpressure, quota, free space, timeouts")
struct GovernanceTests {
    static let app = "com.example.app"
    static let other = "com.example.other"

    static func post(
        _ client: any TestClientProtocol, _ token: String, index: Int, bundle: String = app,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = ingestHeaders(token, gzip: true)
        headers.append(contentsOf: extra)
        return try await client.execute(
            uri: "/v1/metrics", method: .post, headers: headers,
            body: try gzip(metricPayload(index: index, bundle: bundle)))
    }

    @Test("over the key's rate: 429 with Retry-After naming the limit; other keys go on")
    func keyRate() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        let otherToken = try env.token(.ingest, app: Self.other)
        let read = try env.token(.read)
        var config = env.config()
        // One token an hour: the three posts below land within it however slowly a starved suite
        // runs them (at one per 12 s a run under the whole suite refilled a token between them).
        // How a key recovers is ``TokenBucketsTests``' part, on explicit instants.
        config.governance.ingestRatePerKey = 1.0 / 3_600
        config.governance.ingestBurstPerKey = 2
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            #expect(try await Self.post(client, token, index: 1).status == .accepted)
            #expect(try await Self.post(client, token, index: 2).status == .accepted)
            let refused = try await Self.post(client, token, index: 3)
            #expect(refused.status == .tooManyRequests)
            #expect(errorCode(refused.body) == "ingest_rate_per_key")
            let retry = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect((3_000...3_600).contains(retry))
            #expect(String(buffer: refused.body).contains("burst 2"), "\(String(buffer: refused.body))")
            // Another app's key is not slowed.
            #expect(try await Self.post(client, otherToken, index: 4, bundle: Self.other).status == .accepted)
            // Nothing of the refused request was stored.
            #expect(try env.database.payloadCount(app: Self.app) == 2)
            let metrics = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(read)"])
            #expect(
                String(buffer: metrics.body).contains(
                    #"lifeline_ingest_refusals_total{app="com.example.app",limit="ingest_rate_per_key"} 1"#))
        }
    }

    @Test("the rate per address follows X-Forwarded-For only from trusted proxies")
    func addressRate() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        var config = env.config()
        config.governance.ingestRatePerIP = 0.01
        config.governance.ingestBurstPerIP = 1
        config.trustedProxies = ["127.0.0.1"]
        let forwarded = HTTPField.Name("X-Forwarded-For")!
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let first = try await Self.post(client, token, index: 1, headers: [forwarded: "203.0.113.7"])
            #expect(first.status == .accepted)
            let again = try await Self.post(client, token, index: 2, headers: [forwarded: "198.51.100.1, 203.0.113.7"])
            #expect(again.status == .tooManyRequests)
            #expect(errorCode(again.body) == "ingest_rate_per_ip")
            #expect(
                try await Self.post(client, token, index: 3, headers: [forwarded: "203.0.113.8"]).status == .accepted)
        }
        // Without trusting the proxy, the header is ignored: every request is 127.0.0.1's.
        config.trustedProxies = []
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            #expect(
                try await Self.post(client, token, index: 4, headers: [forwarded: "203.0.113.9"]).status == .accepted)
            let refused = try await Self.post(client, token, index: 5, headers: [forwarded: "203.0.113.10"])
            #expect(refused.status == .tooManyRequests)
        }
    }

    @Test("the limit is decided before the body is read: headers alone get the 429")
    func refusedBeforeTheBody() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        var config = env.config()
        config.governance.ingestRatePerKey = 0.01
        config.governance.ingestBurstPerKey = 1
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            #expect(try await Self.post(client, token, index: 1).status == .accepted)
            let port = try #require(client.port)
            let connection = try RawConnection(port: port)
            // A megabyte announced, none of it sent.
            try connection.send(
                "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
            let answer = try await connection.receive(timeout: .seconds(60)).text
            #expect(answer.hasPrefix("HTTP/1.1 429"), "\(answer)")
            #expect(answer.lowercased().contains("retry-after:"))
        }
    }

    @Test("backpressure: bodies in flight over max_inflight_bytes, or a full writer queue, get 503 at once")
    func backpressure() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        var config = env.config()
        let payload = metricPayload(index: 1)
        config.governance.maxInflightBytes = payload.count + 100
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let port = try #require(client.port)
            // One request holds its reservation: headers and half its body, then nothing.
            let slow = try RawConnection(port: port)
            try slow.send(
                "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n\r\n"
                    + String(decoding: payload.prefix(payload.count / 2), as: UTF8.self))
            try await Task.sleep(for: .milliseconds(300))
            let refused = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(bytes: metricPayload(index: 2)))
            #expect(refused.status == .serviceUnavailable)
            #expect(errorCode(refused.body) == "max_inflight_bytes")
            #expect(refused.headers[.retryAfter] == "1")
            // The slow one completes; its reservation is returned.
            try slow.send(String(decoding: payload.dropFirst(payload.count / 2), as: UTF8.self))
            #expect(try await slow.receive(timeout: .seconds(30)).text.hasPrefix("HTTP/1.1 202"))
            let after = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(token),
                body: ByteBuffer(bytes: metricPayload(index: 2)))
            #expect(after.status == .accepted)
        }
        config = env.config()
        config.governance.maxQueuedDocuments = 0
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let refused = try await Self.post(client, token, index: 3)
            #expect(refused.status == .serviceUnavailable)
            #expect(errorCode(refused.body) == "max_queued_documents")
        }
    }

    @Test("the daily quota per app: 429 naming it, counted from the database after a restart")
    func dailyQuota() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        let otherToken = try env.token(.ingest, app: Self.other)
        var config = env.config()
        config.governance.appDailyDocuments = 2
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            #expect(try await Self.post(client, token, index: 1).status == .accepted)
            #expect(try await Self.post(client, token, index: 2).status == .accepted)
            let refused = try await Self.post(client, token, index: 3)
            #expect(refused.status == .tooManyRequests)
            #expect(errorCode(refused.body) == "app_daily_documents")
            #expect(refused.headers[.retryAfter].flatMap { Int($0) }.map { $0 > 0 && $0 <= 86_400 } == true)
            #expect(try await Self.post(client, otherToken, index: 4, bundle: Self.other).status == .accepted)
        }
        // A new server (a restart) counts today's documents from the database.
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            #expect(try await Self.post(client, token, index: 5).status == .tooManyRequests)
        }
        #expect(try env.database.payloadCount(app: Self.app) == 2)
    }

    @Test("below min_free_disk_bytes ingest answers 507 before writing, and /readyz says why")
    func freeSpaceGuard() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        var config = env.config()
        config.governance.minFreeDiskBytes = .max
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let refused = try await Self.post(client, token, index: 1)
            #expect(refused.status.code == 507)
            #expect(errorCode(refused.body) == "insufficient_storage")
            #expect(refused.headers[.retryAfter] != nil)
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(String(buffer: ready.body).contains("disk_space"))
        }
        #expect(try env.database.payloadCount(app: Self.app) == 0)
    }

    @Test("a request head over max_header_bytes gets 400 and a closed connection")
    func oversizedHead() async throws {
        let env = try TemporaryDatabase()
        var config = env.config()
        config.maxHeaderBytes = 4_096
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let connection = try RawConnection(port: try #require(client.port))
            try connection.send(
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 8_000))\r\n\r\n"
            )
            let answer = try await connection.receive(timeout: .seconds(30))
            #expect(answer.text.hasPrefix("HTTP/1.1 400"), "\(answer.text)")
            let small = try RawConnection(port: try #require(client.port))
            try small.send(
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 2_000))\r\n\r\n"
            )
            #expect(try await small.receive(timeout: .seconds(30)).text.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("a client that sends half a request and stalls is cut off after the read timeout")
    func stalledClientIsCutOff() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        var config = env.config()
        config.readTimeout = .seconds(1)
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            let port = try #require(client.port)
            let started = ContinuousClock.now
            let headers = try RawConnection(port: port)
            try headers.send("POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bear")
            let body = try RawConnection(port: port)
            try body.send(
                "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"appVersion\":")
            #expect(try await headers.receive(timeout: .seconds(30)).closed)
            #expect(try await body.receive(timeout: .seconds(30)).closed)
            #expect(started.duration(to: .now) < .seconds(25))
            // The server still serves others (on a new connection: the test client's idle one was
            // closed by the same timeout).
            let fresh = try RawConnection(port: port)
            try fresh.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await fresh.receive(timeout: .seconds(30)).text.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("the retention service prunes the days past data_days while the server runs, and counts it on /metrics")
    func retentionService() async throws {
        let env = try TemporaryDatabase()
        let token = try env.token(.ingest, app: Self.app)
        let read = try env.token(.read)
        var config = env.config()
        // Keep from 2026-10-15: the payload of 2026-10-01 goes, the one of 2026-10-20 stays.
        let kept: UTCDay = "2026-10-15"
        config.retention = RetentionPolicy(
            rawDays: 0, dataDays: UTCDay.today.ordinal - kept.ordinal + 1, idempotencyDays: 0, alertHistoryDays: 0)
        config.pruneInitialDelay = .zero
        config.pruneInterval = .milliseconds(100)
        try await TemporaryDatabase.withLiveServer(config) { client async throws in
            for (index, day) in [(1, 1), (2, 20)] {
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true),
                    body: try gzip(metricPayload(index: index, day: day)))
                #expect(response.status == .accepted)
            }
            // Generous: both waits below end as soon as it happens (a loaded suite took over 20 s).
            let deadline = ContinuousClock.now + .seconds(60)
            while try env.database.payloadCount() > 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try env.database.payloadCount() == 1)
            let apps = try await client.execute(
                uri: "/v1/apps", method: .get, headers: [.authorization: "Bearer \(read)"])
            let app = try #require((try json(apps.body)["apps"] as? [[String: Any]])?.first)
            #expect(app["metric_payloads"] as? Int == 1)
            #expect(app["first_day"] as? String == "2026-10-20")
            // Counted when the run ends (after its last step).
            var counted = false
            while !counted, ContinuousClock.now < deadline {
                let metrics = try await client.execute(
                    uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(read)"])
                counted = String(buffer: metrics.body).contains(#"lifeline_retention_removed_total{kind="payload"} 1"#)
                if !counted { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(counted)
        }
    }
}
