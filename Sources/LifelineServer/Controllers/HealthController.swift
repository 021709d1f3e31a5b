import Foundation
import Hummingbird
import LifelineStorage

/// `GET /healthz` (the process answers) and `GET /readyz` (the database answers, the writer
/// accepts work and the disk has more than `limits.min_free_disk_bytes` free). Both are open:
/// they reveal nothing but a status and its reason, and orchestrators probe them without
/// credentials.
struct HealthController: Sendable {
    /// The store's health: one round trip, and whether its writer takes work.
    let health: any StoreHealth
    let admission: IngestAdmission
    /// Whether this process runs the singletons (told in `/readyz`; always true on SQLite).
    let leader: @Sendable () -> Bool

    func addRoutes(to router: Router<LifelineRequestContext>) {
        router.get("healthz") { _, _ in
            Self.json(.ok, "{\"status\":\"ok\"}")
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: EmbeddedOpenAPI.yaml)))
        }
        router.get("readyz") { _, context in
            do {
                // Within a second, whatever the database does (a lost one must not hold the probe).
                let health = self.health
                try await withDeadline(.seconds(1), "readyz") { try await health.ping() }
            } catch {
                context.logger.warning("readiness: database check failed", metadata: ["error": "\(error)"])
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"database\"}")
            }
            guard health.isAcceptingWrites else {
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"writer\"}")
            }
            if admission.diskStatus().low {
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"disk_space\"}")
            }
            // The aggregator's lag is reported, not judged: a backlog is folded behind the door
            // while the node keeps taking writes.
            let statistics = health.writerStatistics
            let lag = String(format: "%.3f", statistics.aggregationLagSeconds)
            return Self.json(
                .ok,
                "{\"status\":\"ready\",\"leader\":\(leader()),\"aggregation\":{\"lag_documents\":"
                    + "\(statistics.aggregationLagDocuments),\"lag_seconds\":\(lag)}}")
        }
    }

    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
