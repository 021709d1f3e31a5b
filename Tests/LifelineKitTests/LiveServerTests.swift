import Foundation
import Testing

@testable import LifelineKit

/// Rate limits off: tests post as fast as 127.0.0.1 allows.
let unlimited = "limits:\n  ingest_rate_per_key: 0\n  ingest_rate_per_ip: 0\n"

@Suite("The client against a real lifeline serve on 127.0.0.1", .serialized, .timeLimit(.minutes(3)))
struct LiveServerTests {
    @Test("every report is stored exactly once when the server is SIGKILLed during uploads and restarted")
    func serverKilledDuringUploads() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited)
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: server.ingestKey, spool: spool.url, concurrency: 4))
        let log = await record(client)
        let count = 300
        for index in 0..<count { try await client.submit(metricReport(index), kind: .metric) }
        try await log.wait { $0.filter(\.isDelivered).count >= 20 }
        server.stop(SIGKILL)
        try await log.wait { $0.contains { $0.retryStatus == .some(nil) } }
        try await server.start(config: unlimited)

        #expect(await client.flush() == 0)
        let counters = await client.counters
        #expect(counters.delivered == count)
        #expect(counters.retries > 0)
        #expect(counters.droppedTotal == 0)
        #expect(try await server.stored().metrics == count)
        #expect(spooledFiles(spool.url).isEmpty)
        server.stop()
    }

    @Test("a 429 storm from the server's rate limit delays uploads and loses nothing")
    func rateLimitedServer() async throws {
        let server = try LiveServer()
        try await server.start(config: "limits:\n  ingest_rate_per_key: 1\n  ingest_burst_per_key: 1\n")
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: server.ingestKey, spool: spool.url, concurrency: 2))
        let log = await record(client)
        for index in 0..<3 { try await client.submit(metricReport(index), kind: .metric) }
        let started = ContinuousClock.now
        #expect(await client.flush() == 0)
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(try await server.stored().metrics == 3)
        let refusals = log.all.filter { $0.outcome.retryStatus == .some(429) }
        #expect(!refusals.isEmpty)
        for refusal in refusals {
            if case .retrying(_, let after, let message) = refusal.outcome.event {
                #expect(after >= .seconds(1))
                #expect(message.contains("ingest_rate_per_key"))
            }
        }
        #expect(await client.counters.droppedTotal == 0)
        server.stop()
    }

    @Test("413 and 422 are dropped and counted with the server's error code, never retried")
    func clientErrorsAreDropped() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited + "  max_body_bytes: 4096\n")
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(server.url, key: server.ingestKey, spool: spool.url))
        let log = await record(client)
        try await client.submit(metricReport(1, padding: 20_000), kind: .metric)
        try await client.submit(Data(#"{"hello": "world"}"#.utf8), kind: .metric)
        try await client.submit(metricReport(2), kind: .metric)
        #expect(await client.flush() == 0)

        let counters = await client.counters
        #expect(
            counters.dropped == [
                DropReason(status: 413, code: "body_too_large"): 1, DropReason(status: 422, code: "not_metrickit"): 1,
            ])
        #expect(counters.retries == 0)
        #expect(counters.delivered == 1)
        #expect(try await server.stored().metrics == 1)
        try await log.wait { $0.count == 3 }
        #expect(log.all.allSatisfy { $0.outcome.attempts == 1 })
        #expect(spooledFiles(spool.url).isEmpty)
        server.stop()
    }

    @Test("507 pauses uploads without using up attempts until the server has room again")
    func insufficientStorageWaits() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited + "  min_free_disk_bytes: 1000000000000000000\n")
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(
                server.url, key: server.ingestKey, spool: spool.url, attemptsPerPass: 2,
                maxRetryAfter: .milliseconds(100)))
        let log = await record(client)
        try await client.submit(metricReport(1), kind: .metric)
        try await log.wait { $0.filter { $0.retryStatus == .some(507) }.count >= 4 }
        #expect(!log.all.contains { if case .deferred = $0.outcome.event { true } else { false } })
        server.stop()
        try await server.start(config: unlimited)
        #expect(await client.flush() == 0)
        #expect(await client.counters.delivered == 1)
        #expect(try await server.stored().metrics == 1)
        server.stop()
    }

    @Test("nothing leaves before consent is granted; denial deletes the spool and stops collecting")
    func consentTransitions() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited)
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let configuration = testConfiguration(
            server.url, key: server.ingestKey, spool: spool.url, requiresConsent: true)
        let client = try await Lifeline.start(configuration)
        #expect(await client.consent == .pending)
        for index in 0..<3 { try await client.submit(metricReport(index), kind: .metric) }
        #expect(await client.flush(timeout: .milliseconds(300)) == 3)
        #expect(try await server.stored().metrics == 0)
        #expect(spooledFiles(spool.url).count == 3)

        // A relaunch still waits for consent, with the reports kept.
        let relaunched = try await Lifeline.start(configuration)
        #expect(await relaunched.pendingReports == 3)
        #expect(await relaunched.flush(timeout: .milliseconds(300)) == 3)
        #expect(try await server.stored().metrics == 0)

        try await relaunched.setConsent(.granted)
        #expect(await relaunched.flush() == 0)
        #expect(try await server.stored().metrics == 3)

        try await relaunched.submit(metricReport(10), kind: .metric)
        try await relaunched.setConsent(.pending)
        try await relaunched.submit(metricReport(11), kind: .metric)
        try await relaunched.setConsent(.denied)
        #expect(spooledFiles(spool.url).isEmpty)
        #expect(await relaunched.pendingReports == 0)
        #expect(try await relaunched.submit(metricReport(12), kind: .metric) == .notCollected)

        let afterDenial = try await Lifeline.start(configuration)
        #expect(await afterDenial.consent == .denied)
        #expect(try await afterDenial.submit(metricReport(13), kind: .metric) == .notCollected)
        #expect(spooledFiles(spool.url).isEmpty)
        let stored = try await server.stored().metrics
        #expect(stored >= 3 && stored <= 4, "only report 10 may have left before pending")
        server.stop()
    }

    @Test("the same bytes from a second install are a duplicate, stored once")
    func secondInstallIsDuplicate() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited)
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        defer {
            first.remove()
            second.remove()
        }
        let report = metricReport(42)
        let one = try await Lifeline.start(testConfiguration(server.url, key: server.ingestKey, spool: first.url))
        try await one.submit(report, kind: .metric)
        #expect(await one.flush() == 0)
        #expect(try await one.submit(report, kind: .metric) == .alreadyDelivered(id: ContentHash.hex(report)))
        #expect(await one.counters.duplicates == 1)

        let two = try await Lifeline.start(testConfiguration(server.url, key: server.ingestKey, spool: second.url))
        let log = await record(two)
        try await two.submit(report, kind: .metric)
        #expect(await two.flush() == 0)
        try await log.wait { $0.contains(where: \.isDelivered) }
        #expect(log.all.map(\.outcome.event) == [.delivered(accepted: 0, duplicates: 1, replayed: true)])
        #expect(await two.counters.duplicates == 1)
        #expect(try await server.stored().metrics == 1)
        server.stop()
    }
}
