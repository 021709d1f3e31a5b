import Foundation
import LifelineAnalysis
import HTTPTypes
import HummingbirdTesting
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Synchronization
import Testing

@Suite("Durability of the real binary under kill -9", .serialized)
struct CrashRecoveryTests {
    /// What the clients saw acknowledged: payload index → stored id.
    final class Acknowledged: Sendable {
        let map = Mutex<[Int: Int]>([:])
        func record(_ index: Int, _ id: Int) { map.withLock { $0[index] = id } }
        var snapshot: [Int: Int] { map.withLock { $0 } }
    }

    /// `versionRows`: `database.explorer_version_rows` of the killed server (0: sealed with the fine
    /// rows). Above 0 its held rows are sealed every 50 ms without their version rows, which it
    /// holds unsealed when it dies: they are replayed at the restart.
    @Test(
        "every acknowledged payload survives SIGKILL under load, and the database is intact",
        arguments: [0, 100_000])
    func acknowledgedPayloadsSurviveKill(versionRows: Int) async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let token = try env.token(.ingest, app: "com.example.app")
        // 16 clients on 127.0.0.1 as fast as they can: the rate limits would refuse them.
        let config = try env.write(
            "unlimited.yaml",
            "limits:\n  ingest_rate_per_key: 0\n  ingest_rate_per_ip: 0\n"
                + "database:\n  explorer_version_rows: \(versionRows)\n"
                + (versionRows > 0 ? "  explorer_write_seconds: 0.05\n" : ""))
        let server = try Lifeline.Server(database: env.path, extra: ["--config", config])
        try await server.waitUntilReady()

        let acknowledged = Acknowledged()
        let clients = 16
        let port = server.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    // Each client posts distinct payloads until the server dies under it.
                    try? await TestClient.withClient(host: "127.0.0.1", port: port) { http in
                        for n in 0..<100_000 {
                            let index = client * 100_000 + n
                            let body = try gzip(metricPayload(index: index))
                            let response = try await http.post(
                                "/v1/metrics", headers: ingestHeaders(token, gzip: true), body: body)
                            guard response.status == .accepted, let responseBody = response.body,
                                let ids = try json(responseBody)["ids"] as? [Int], ids.count == 1
                            else { return }
                            acknowledged.record(index, ids[0])
                        }
                    }
                }
            }
            group.addTask {
                // Let the load run, then kill the server mid-flight.
                while acknowledged.snapshot.count < 300 { try await Task.sleep(for: .milliseconds(20)) }
                server.kill(SIGKILL)
            }
            try await group.waitForAll()
        }
        #expect(await server.wait() == SIGKILL)
        let before = acknowledged.snapshot
        #expect(before.count >= 300)

        #expect(try env.database.integrityCheck() == "ok")
        let stored = try env.database.payloadCount(app: "com.example.app", kind: .metric)
        #expect(stored >= before.count, "stored \(stored) < acknowledged \(before.count)")

        // Restart and re-post every acknowledged payload: each must be a duplicate with its original id.
        let restarted = try Lifeline.Server(database: env.path)
        try await restarted.waitUntilReady()
        try await TestClient.withClient(host: "127.0.0.1", port: restarted.port) { http in
            for (index, id) in before.sorted(by: { $0.key < $1.key }) {
                let response = try await http.post(
                    "/v1/metrics", headers: ingestHeaders(token, gzip: true),
                    body: try gzip(metricPayload(index: index)))
                #expect(response.status == .accepted)
                let answer = try json(response.body ?? ByteBuffer())
                #expect(answer["duplicates"] as? Int == 1, "payload \(index) was lost")
                #expect(answer["ids"] as? [Int] == [id])
            }
        }
        restarted.kill(SIGTERM)
        #expect(await restarted.wait() == 0, "graceful shutdown exits 0")
        #expect(try env.database.payloadCount(app: "com.example.app", kind: .metric) == stored)
        #expect(try env.database.integrityCheck() == "ok")

        // Killed mid-fold, restarted, stopped: every figure equals a fresh refold of the raw
        // documents (nothing folded twice, nothing skipped), and every stored document counts.
        let folded = try await Self.figures(env.database)
        #expect(folded.deviceDays == stored)
        #expect(folded.explorer.count > 10)
        _ = try env.database.refold()
        #expect(try await Self.figures(env.database) == folded)
    }

    /// The figures a kill could disturb: device-days, exits by version × OS × device, signposts and
    /// launch percentiles by version, and the explorer's device-days per metric, version and app
    /// state (its rows are held in memory across folds: a kill loses them, the restart replays).
    struct Figures: Equatable {
        var deviceDays: Int64
        var exits: [ExitFigure]
        var signposts: [SignpostRow]
        var launch: [PercentileFigure]
        var explorer: [String]
    }

    static func figures(_ database: Database) async throws -> Figures {
        try await AnalysisRunner(source: database).analyze { analyzer in
            let scope = Scope(app: "com.example.app", days: DayRange(from: "2000-01-01", to: "2100-01-01"))
            return Figures(
                deviceDays: try await analyzer.usage(scope).map(\.payloads).reduce(0, +),
                exits: try await analyzer.exits(scope.grouped(by: [.version, .os, .device])),
                signposts: try await analyzer.signposts(scope.grouped(by: [.version])),
                launch: try await analyzer.percentiles(
                    scope.grouped(by: [.version]), source: Analyzer.launchHistograms[0].source),
                explorer: try await analyzer.explorer(scope.grouped(by: [.version]), minimumDeviceDays: 0).map {
                    "\($0.metric) \($0.subject ?? "") \($0.version ?? "") \($0.appState ?? "") \($0.deviceDays)"
                }.sorted())
        }
    }
}
