import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineAlerts
import LifelineAnalysis
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

@testable import LifelineServer

@Suite("GET /v1/alerts, GET /v1/rules, POST /-/reload")
struct AlertsEndpointTests {
    /// Puts a key of the role named by `X-Test-Role` in the context (the real auth is tested elsewhere).
    struct RoleMiddleware: RouterMiddleware {
        typealias Context = LifelineRequestContext
        static let header = HTTPField.Name("X-Test-Role")!
        /// Optional app scope of the test key.
        static let appHeader = HTTPField.Name("X-Test-App")!

        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            var context = context
            if let role = request.headers[Self.header].flatMap(Role.init(rawValue:)) {
                context.apiKey = APIKey(id: "test", role: role, app: request.headers[Self.appHeader], createdAt: 0)
            }
            return try await next(request, context)
        }
    }

    @Test("alerts and rules need a read key, reload an admin key; a bad reload is refused with its problems")
    func endpoints() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await env.ingest([Payloads.metric(day: "2026-11-01", attempts: 100, failures: 5)])
        let path = try env.write("rules.yaml", AlertEvaluatorTests.rules(port: 9, forDuration: "0s"))
        let evaluator = AlertEvaluator(
            analysis: AnalysisRunner(source: env.database), store: env.database.alertState,
            rules: try RuleFileLoader.load(path: path), rulesPath: path,
            clock: ManualClock(Payloads.time("2026-11-01", hour: 12)), logger: .quiet)
        await evaluator.evaluate(at: Payloads.time("2026-11-01", hour: 12))

        let router = Router(context: LifelineRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        let controller = AlertsController(evaluator: evaluator)
        controller.addRoutes(to: router.group("v1").add(middleware: RoleMiddleware()))
        controller.addAdminRoutes(to: router.group("-").add(middleware: RoleMiddleware()))
        let app = Application(router: router, logger: .quiet)

        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/alerts", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v1/alerts", method: .get, headers: [RoleMiddleware.header: "read"]) {
                response in
                #expect(response.status == .ok)
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                let alerts = body?["alerts"] as? [[String: Any]]
                #expect(alerts?.count == 1)
                #expect(alerts?.first?["state"] as? String == "firing")
                #expect((alerts?.first?["labels"] as? [String: String])?["version"] == "4.2.0")
                #expect((body?["recent_changes"] as? [Any])?.count == 2)
            }
            try await client.execute(uri: "/v1/rules", method: .get, headers: [RoleMiddleware.header: "read"]) {
                response in
                #expect(response.status == .ok)
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                let rule = (body?["rules"] as? [[String: Any]])?.first
                #expect(rule?["name"] as? String == "restoration_error_rate")
                #expect(rule?["firing"] as? Int == 1)
                #expect(rule?["last_evaluation"] as? String == "2026-11-01T12:00:00Z")
                #expect((rule?["value_summary"] as? String)?.contains("1 over threshold") == true)
            }
            // A read key scoped to another app sees none of this app's alerts, in either list.
            let otherApp: HTTPFields = [RoleMiddleware.header: "read", RoleMiddleware.appHeader: "com.other.app"]
            try await client.execute(uri: "/v1/alerts", method: .get, headers: otherApp) { response in
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect((body?["alerts"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/v1/rules", method: .get, headers: otherApp) { response in
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect((body?["rules"] as? [[String: Any]])?.first?["firing"] as? Int == 0)
            }
            try await client.execute(uri: "/-/reload", method: .post, headers: [RoleMiddleware.header: "read"]) {
                response in
                #expect(response.status == .forbidden)
            }
            _ = try env.write("rules.yaml", "groups:\n  - name: g\n    rules:\n      - name: x\n        query: nope\n")
            try await client.execute(uri: "/-/reload", method: .post, headers: [RoleMiddleware.header: "admin"]) {
                response in
                #expect(response.status == .unprocessableContent)
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                let error = body?["error"] as? [String: Any]
                #expect(error?["code"] as? String == "invalid_rules")
                let problems = error?["problems"] as? [String] ?? []
                #expect(
                    problems.contains { $0.hasPrefix(#"rules.yaml:5: rule "x": query: column 1: unknown measure"#) })
                #expect(problems.contains { $0.hasPrefix(#"rules.yaml:4: rule "x": a rule needs op"#) })
            }
            #expect(await evaluator.snapshot().rules.rules.map(\.name) == ["restoration_error_rate"])
            _ = try env.write("rules.yaml", AlertEvaluatorTests.rules(port: 9, threshold: "0.2"))
            try await client.execute(uri: "/-/reload", method: .post, headers: [RoleMiddleware.header: "admin"]) {
                response in
                #expect(response.status == .ok)
            }
            #expect(await evaluator.snapshot().rules.rules.first?.threshold == 0.2)
        }
    }
}
