import Hummingbird
import LifelineStore

/// `GET /healthz` (the process answers) and `GET /readyz` (the database answers, the writer
/// accepts work and the disk has more than `limits.min_free_disk_bytes` free). Both are open:
/// they reveal nothing but a status and its reason, and orchestrators probe them without
/// credentials.
struct HealthController: Sendable {
    /// One round trip to the database.
    let ping: @Sendable () async throws -> Void
    /// Whether the writer takes work.
    let accepting: @Sendable () -> Bool
    let admission: IngestAdmission
    /// PostgreSQL: whether this node is the leader (told in `/readyz`); nil on SQLite.
    var leader: (@Sendable () -> Bool)?

    init(database: Database, writer: IngestWriter, admission: IngestAdmission) {
        self.ping = { _ = try await database.write { try $0.ping() } }
        self.accepting = { writer.isAccepting }
        self.admission = admission
    }

    init(
        ping: @escaping @Sendable () async throws -> Void, accepting: @escaping @Sendable () -> Bool,
        admission: IngestAdmission, leader: (@Sendable () -> Bool)?
    ) {
        self.ping = ping
        self.accepting = accepting
        self.admission = admission
        self.leader = leader
    }

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
                try await ping()
            } catch {
                context.logger.warning("readiness: database check failed", metadata: ["error": "\(error)"])
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"database\"}")
            }
            guard accepting() else {
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"writer\"}")
            }
            if admission.diskStatus().low {
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"disk_space\"}")
            }
            if let leader {
                return Self.json(.ok, "{\"status\":\"ready\",\"leader\":\(leader())}")
            }
            return Self.json(.ok, "{\"status\":\"ready\"}")
        }
    }

    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
