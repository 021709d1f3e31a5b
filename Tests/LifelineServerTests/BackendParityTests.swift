import Foundation
import HTTPTypes
import HummingbirdTesting
import LifelineBackends
import LifelineServer
import LifelineTestSupport
import NIOCore
import Testing

/// One composition root: whatever store a deployment runs on, it sees the same routes and the same
/// `/metrics` families (issue 23). Both servers are built by the same `Backends.open` as `serve`.
@Suite("Both stores serve the same deployment")
struct BackendParityTests {
    /// The routes and the metric families one backend's server exposes after an upload and a
    /// retention run.
    private struct Surface: Equatable {
        var routes: [String]
        var families: Set<String>
    }

    private func surface(_ backend: Backend) async throws -> Surface? {
        guard let store = try await TestStore.make(backend) else { return nil }
        defer { Task { await store.remove() } }
        var config = store.config()
        // Retention on, early and often, so its families appear (they did not on PostgreSQL).
        config.retention = .init()
        config.pruneInitialDelay = .milliseconds(100)
        config.pruneInterval = .milliseconds(300)
        let opened = try await Backends.open(config)
        let routes = try await routeDescriptions(config, backend: opened)
        await opened.close()
        let ingest = try await store.token(.ingest, app: "com.example.notes")
        let read = try await store.token(.read)
        let document = try Paths.fixture("metrics/lifeline-authored__ios17-full.json")
        let families = try await store.withLiveServer(config) { client in
            let posted = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest, gzip: true), body: try gzip(document))
            #expect(posted.status == .accepted)
            for _ in 0..<100 {
                let response = try await client.execute(
                    uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(read)"])
                let text = String(buffer: response.body)
                let names = Set(
                    text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.compactMap {
                        $0.split(separator: " ").dropFirst(2).first.map(String.init)
                    })
                if names.contains("lifeline_retention_last_run_timestamp_seconds") { return names }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("\(backend): no retention run reported on /metrics within 10 s")
            return Set<String>()
        }
        return Surface(routes: routes, families: families)
    }

    @Test("SQLite and PostgreSQL answer the same routes and expose the same metric families")
    func sameRoutesAndMetricFamilies() async throws {
        guard let sqlite = try await surface(.sqlite), let postgres = try await surface(.postgres) else { return }
        #expect(sqlite.routes == postgres.routes)
        #expect(sqlite.routes.contains("POST /v1/metrics"))
        #expect(sqlite.routes.contains("GET /v1/apps/{bundleId}/crashes/{groupId}"))
        #expect(sqlite.families.subtracting(postgres.families).isEmpty, "only on SQLite")
        #expect(postgres.families.subtracting(sqlite.families).isEmpty, "only on PostgreSQL")
        for family in [
            "lifeline_retention_removed_total", "lifeline_retention_last_run_timestamp_seconds", "lifeline_leader",
            "lifeline_writer_queue_depth", "lifeline_writer_transactions_total", "lifeline_writer_batch_requests",
        ] {
            #expect(postgres.families.contains(family), "\(family) missing on PostgreSQL")
        }
    }
}
