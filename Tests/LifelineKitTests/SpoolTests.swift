import Foundation
import Testing

@testable import LifelineKit

@Suite("The spool on disk", .timeLimit(.minutes(3)))
struct SpoolTests {
    @Test("a report is on disk, named by the SHA-256 of its bytes, when submit returns")
    func submitPersistsFirst() async throws {
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(nowhere, key: "k", spool: spool.url, requiresConsent: true))
        let report = metricReport(1)
        let result = try await client.submit(report, kind: .metric)
        let id = ContentHash.hex(report)
        #expect(result == .queued(id: id))
        #expect(spooledFiles(spool.url) == ["metric/\(id).json"])
        #expect(try Data(contentsOf: spool.url.appendingPathComponent("metric/\(id).json")) == report)
        #expect(try await client.submit(report, kind: .metric) == .alreadyQueued(id: id))
        #expect(await client.counters.queued == 1)
    }

    @Test("over its disk budget the spool evicts the oldest reports first and counts them")
    func budgetEvictsOldest() async throws {
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let reports = (10..<15).map { metricReport($0) }
        let size = reports[0].count
        #expect(reports.allSatisfy { $0.count == size })
        let client = try await Lifeline.start(
            testConfiguration(
                nowhere, key: "k", spool: spool.url, requiresConsent: true, budget: 3 * size + size / 2))
        let log = await record(client)
        for report in reports { try await client.submit(report, kind: .metric) }
        let ids = reports.map(ContentHash.hex)
        #expect(await client.counters.evicted == 2)
        #expect(await client.counters.queued == 5)
        #expect(spooledFiles(spool.url) == ids[2...].map { "metric/\($0).json" }.sorted())
        try await log.wait { $0.count == 2 }
        #expect(log.all.map(\.outcome.reportID) == Array(ids[0..<2]))
        #expect(log.all.allSatisfy { $0.outcome.event == .evicted })
    }

    @Test("reports older than the maximum age are evicted when the client starts")
    func ageEvicts() async throws {
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let configuration = testConfiguration(nowhere, key: "k", spool: spool.url, requiresConsent: true)
        let first = try await Lifeline.start(configuration)
        try await first.submit(metricReport(1), kind: .metric)
        try await first.submit(metricReport(2), kind: .metric)
        let old = spool.url.appendingPathComponent("metric/\(ContentHash.hex(metricReport(1))).json")
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-31 * 86_400)], ofItemAtPath: old.path)

        let second = try await Lifeline.start(configuration)
        #expect(await second.counters.evicted == 1)
        #expect(await second.pendingReports == 1)
        #expect(spooledFiles(spool.url) == ["metric/\(ContentHash.hex(metricReport(2))).json"])
    }

    @Test("a spooled file that does not match its name is dropped, never uploaded; partial writes are never read")
    func damagedFilesAreNeverSent() async throws {
        let server = try ScriptedServer(
            script: [], fallback: .init(status: 202, body: #"{"accepted":1,"duplicates":0,"ids":[1]}"#))
        defer { server.close() }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        _ = try Spool(directory: spool.url)
        // A whole file under a wrong name (a disk fault), and a partial write left by a killed process.
        let wrong = String(repeating: "0", count: 64)
        try metricReport(1).write(to: spool.url.appendingPathComponent("metric/\(wrong).json"))
        try metricReport(2).prefix(40).write(to: spool.url.appendingPathComponent("tmp/x.partial"))

        let client = try await Lifeline.start(testConfiguration(server.url, key: "k", spool: spool.url))
        #expect(await client.flush() == 0)
        #expect(server.requests.isEmpty)
        #expect(await client.counters.dropped == [DropReason(status: nil, code: "corrupt_spool_file"): 1])
        #expect(spooledFiles(spool.url).isEmpty)
    }

    @Test("collecting an async sequence of Encodable reports spools their JSON with sorted keys, each report once")
    func collectsAsyncSequences() async throws {
        struct Report: Codable, Sendable, Equatable {
            var version = "2.0.0"
            var day: Int
        }
        let spool = try TemporaryDirectory()
        defer { spool.remove() }
        let client = try await Lifeline.start(
            testConfiguration(nowhere, key: "k", spool: spool.url, requiresConsent: true))
        let (stream, continuation) = AsyncStream.makeStream(of: Report.self)
        for day in 1...3 { continuation.yield(Report(day: day)) }
        continuation.finish()
        try await client.collect(stream, kind: .diagnostic)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let expected = try (1...3).map { try encoder.encode(Report(day: $0)) }
        #expect(spooledFiles(spool.url) == expected.map { "diagnostic/\(ContentHash.hex($0)).json" }.sorted())
        #expect(await client.pendingReports == 3)
        // The same report again (a sequence that re-delivers) has the same bytes: nothing new is kept.
        for _ in 0..<5 {
            let again = try await client.submit(encoding: Report(day: 2), kind: .diagnostic)
            #expect(again == .alreadyQueued(id: ContentHash.hex(expected[1])))
        }
    }
}
