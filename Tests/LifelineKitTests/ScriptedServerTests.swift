import Foundation
import Testing

@testable import LifelineKit

@Suite("Uploads against a scripted HTTP server on 127.0.0.1", .serialized, .timeLimit(.minutes(3)))
struct ScriptedServerTests {
    static let accepted = ScriptedServer.Answer(status: 202, body: #"{"accepted":1,"duplicates":0,"ids":[1]}"#)

    @Test("a 429 storm with Retry-After: no request leaves before the time it names")
    func honoursRetryAfter() async throws {
        let tooMany = ScriptedServer.Answer(
            status: 429, headers: ["Retry-After": "1"],
            body: #"{"error":{"code":"ingest_rate_per_key","message":"slow down"}}"#)
        let server = try ScriptedServer(script: [tooMany, tooMany], fallback: Self.accepted)
        defer { server.close() }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: "k", spool: spool.url, requiresConsent: true, concurrency: 1))
        try await client.submit(metricReport(1), kind: .metric)
        try await client.submit(metricReport(2), kind: .metric)
        try await client.setConsent(.granted)
        // No timeout: on a loaded machine the cooperative pool (two threads here) can be held for tens of seconds
        // by other suites' long synchronous work, and a timer would end the wait before the client could act.
        // The suite's time limit bounds a client that never finishes.
        #expect(await client.flush() == 0)

        let requests = server.requests
        #expect(requests.map(\.status) == [429, 429, 202, 202])
        for (earlier, later) in zip(requests, requests.dropFirst()) where earlier.status == 429 {
            #expect(later.arrived - earlier.answered >= .seconds(1), "a request came before Retry-After")
        }
        let counters = await client.counters
        #expect(counters.delivered == 2)
        #expect(counters.retries == 2)
    }

    @Test("408, 500 and 503 are retried with the same Idempotency-Key, the content hash")
    func retriesServerErrors() async throws {
        let server = try ScriptedServer(
            script: [.init(status: 500), .init(status: 408), .init(status: 503)], fallback: Self.accepted)
        defer { server.close() }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(testConfiguration(server.url, key: "secret", spool: spool.url))
        let log = await record(client)
        let report = metricReport(3)
        try await client.submit(report, kind: .diagnostic)
        #expect(await client.flush() == 0)

        let requests = server.requests
        #expect(requests.map(\.status) == [500, 408, 503, 202])
        for request in requests {
            #expect(request.path == "/v1/diagnostics")
            #expect(request.headers["idempotency-key"] == ContentHash.hex(report))
            #expect(request.headers["authorization"] == "Bearer secret")
            #expect(request.headers["content-encoding"] == "gzip")
            #expect(request.body == (try Gzip.compress(report)))
        }
        try await log.wait { $0.contains(where: \.isDelivered) }
        #expect(log.all.compactMap(\.outcome.retryStatus) == [500, 408, 503])
        #expect(await client.counters.retries == 3)
        #expect(spooledFiles(spool.url).isEmpty)
    }

    @Test("an adapter's delivery of diagnostics is kept in order and uploaded before receive returns")
    func receiveUploadsDiagnostics() async throws {
        let server = try ScriptedServer(script: [], fallback: Self.accepted)
        defer { server.close() }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: "k", spool: spool.url, concurrency: 1))
        let reports = [metricReport(7), metricReport(8), metricReport(9)]
        #expect(await client.receive(reports, kind: .diagnostic) == 3)
        #expect(server.requests.map { $0.headers["idempotency-key"] } == reports.map(ContentHash.hex))
        #expect(server.requests.allSatisfy { $0.path == "/v1/diagnostics" })
        // pastDiagnosticPayloads drained again at the next start: the same bytes are not sent again.
        #expect(await client.receive(reports, kind: .diagnostic) == 0)
        #expect(server.requests.count == 3)
        #expect(await client.counters.duplicates == 3)
    }

    @Test("a report out of attempts stays in the spool for the next pass")
    func outOfAttemptsIsDeferred() async throws {
        let server = try ScriptedServer(script: [], fallback: .init(status: 502))
        defer { server.close() }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: "k", spool: spool.url, attemptsPerPass: 3))
        let log = await record(client)
        try await client.submit(metricReport(4), kind: .metric)
        #expect(await client.flush() == 1)
        #expect(server.requests.count == 3)
        try await log.wait { $0.contains { if case .deferred(502, _) = $0.event { true } else { false } } }
        #expect(spooledFiles(spool.url).count == 1)
        #expect(await client.counters.droppedTotal == 0)
    }
}
