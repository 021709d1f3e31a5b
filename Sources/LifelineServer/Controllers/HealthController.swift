import Hummingbird
import LifelineStore

/// `GET /healthz` (the process answers) and `GET /readyz` (the database answers and the writer
/// accepts work). Both are open: they reveal nothing but a status, and orchestrators probe them
/// without credentials.
struct HealthController: Sendable {
    let database: Database
    let writer: IngestWriter

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
                _ = try await database.write { try $0.ping() }
            } catch {
                context.logger.warning("readiness: database check failed", metadata: ["error": "\(error)"])
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"database\"}")
            }
            guard writer.isAccepting else {
                return Self.json(.serviceUnavailable, "{\"status\":\"not_ready\",\"reason\":\"writer\"}")
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
