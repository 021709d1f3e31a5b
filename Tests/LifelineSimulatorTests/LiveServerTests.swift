import Foundation
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSimulator
import LifelineSQLite
import LifelineTestSupport
import Testing

@Suite("Simulating against a live server on 127.0.0.1")
struct LiveServerTests {
    /// Runs `body` with the base URL of a live server on a fresh database and an ingest key of the app.
    private func withServer(
        _ body: @Sendable (_ baseURL: String, _ key: String, _ database: Database) async throws -> Void
    ) async throws {
        let db = try TemporaryDatabase()
        defer { db.remove() }
        let key = try db.database.createKey(role: .ingest, app: "com.example.notes").token
        try await db.withLiveServer { client in
            let port = try #require(client.port)
            try await body("http://127.0.0.1:\(port)", key, db.database)
        }
    }

    private func simulate(
        _ simulation: Simulation, url: String, key: String, timeout: Duration = .seconds(30)
    ) async throws -> RunSummary {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("simulate-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: spool) }
        let sink = try await SpoolSink.open(
            url: try #require(URL(string: url)), key: key, spool: spool, concurrency: 4, attempts: 3,
            baseBackoff: .milliseconds(10), timeout: timeout)
        return await SimulationRunner.run(simulation, into: sink, concurrency: 4)
    }

    @Test("a small fleet is stored exactly as the simulator says it sent it")
    func storedCountsMatch() async throws {
        let simulation = try Simulation(testConfig(devices: 20, days: 3, scenario: .crashSpike))
        try await withServer { url, key, database in
            let summary = try await simulate(simulation, url: url, key: key)
            #expect(summary.totalErrors == 0, "\(summary.sampleFailures)")
            #expect(summary.sent[.metric] == 60)
            #expect((summary.sent[.diagnostic] ?? 0) > 0)
            #expect(summary.accepted == summary.totalSent)
            #expect(summary.duplicates == 0)
            #expect(summary.latencies.count == summary.totalSent)
            let metrics = try database.payloadCount(app: "com.example.notes", kind: .metric)
            let diagnostics = try database.payloadCount(app: "com.example.notes", kind: .diagnostic)
            #expect(metrics == summary.sent[.metric])
            #expect(diagnostics == summary.sent[.diagnostic])
            let truth = summary.truth.versions.values.reduce(0) { $0 + $1.diagnosticPayloads }
            #expect(truth == diagnostics)
        }
    }

    @Test("running the same simulation twice yields only duplicates the second time")
    func rerunIsIdempotent() async throws {
        let simulation = try Simulation(testConfig(devices: 20, days: 3, scenario: .watchdogSpike))
        try await withServer { url, key, database in
            let first = try await simulate(simulation, url: url, key: key)
            #expect(first.totalErrors == 0, "\(first.sampleFailures)")
            let stored = try database.payloadCount(app: "com.example.notes")
            #expect(stored == first.totalSent)

            let second = try await simulate(simulation, url: url, key: key)
            #expect(second.totalErrors == 0)
            #expect(second.totalSent == first.totalSent)
            #expect(second.accepted == 0)
            #expect(second.duplicates == first.totalSent)
            #expect(second.replayed == first.totalSent)
            #expect(try database.payloadCount(app: "com.example.notes") == stored)
        }
    }

    @Test("a client error is reported by status and not retried")
    func clientErrorsAreNotRetried() async throws {
        let simulation = try Simulation(testConfig(devices: 2, days: 1))
        try await withServer { url, _, database in
            let summary = try await simulate(simulation, url: url, key: "ll_nope_nope")
            #expect(summary.errors["401"] == summary.totalSent)
            #expect(summary.retries == 0)
            #expect(try database.payloadCount() == 0)
        }
    }

    @Test("connection errors are retried, then reported as connection errors")
    func connectionErrorsAreRetried() async throws {
        let simulation = try Simulation(testConfig(devices: 1, days: 1))
        // Port 9 (discard) on 127.0.0.1 refuses connections on a test machine.
        let summary = try await simulate(
            simulation, url: "http://127.0.0.1:9", key: "k", timeout: .milliseconds(300))
        #expect(summary.errors["connection"] == summary.totalSent)
        #expect(summary.retries == 2 * summary.totalSent)
    }
}
