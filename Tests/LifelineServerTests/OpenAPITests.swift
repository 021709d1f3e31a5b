import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineTestSupport
import Testing

@Suite("The OpenAPI document")
struct OpenAPITests {
    static var specText: String {
        get throws { try String(contentsOf: Paths.repository.appendingPathComponent("openapi.yaml"), encoding: .utf8) }
    }

    @Test("the binary embeds openapi.yaml byte for byte")
    func embeddedEqualsFile() throws {
        #expect(EmbeddedOpenAPI.yaml == (try Self.specText))
    }

    @Test("real responses of every endpoint match the schemas of the spec")
    func responsesMatchSpec() async throws {
        let validator = try SchemaValidator(yaml: try Self.specText)
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let notes = "com.example.notes"
        let ingest = try env.token(.ingest, app: notes)
        let read = try env.token(.read)
        try await env.withLiveServer { client in
            let served = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(served.status == .ok)
            #expect(String(buffer: served.body) == (try Self.specText))

            func check(
                _ method: HTTPRequest.Method, _ uri: String, spec path: String, token: String?, body: Data? = nil,
                status: Int
            ) async throws {
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                let response = try await client.execute(
                    uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
                #expect(Int(response.status.code) == status, "\(uri): \(String(buffer: response.body))")
                let schema = try validator.responseSchema(
                    path: path, method: method.rawValue.lowercased(), status: Int(response.status.code))
                let value = try JSONSerialization.jsonObject(
                    with: Data(buffer: response.body), options: [.fragmentsAllowed])
                let problems = try validator.violations(of: value, against: schema)
                #expect(problems.isEmpty, "\(uri): \(problems)")
            }

            let full = try Paths.fixture("metrics/lifeline-authored__ios17-full.json")
            let crash = try Paths.fixture("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json")
            try await check(.post, "/v1/metrics", spec: "/v1/metrics", token: ingest, body: full, status: 202)
            try await check(.post, "/v1/diagnostics", spec: "/v1/diagnostics", token: ingest, body: crash, status: 202)
            try await check(.post, "/v1/metrics", spec: "/v1/metrics", token: nil, body: full, status: 401)
            try await check(
                .post, "/v1/metrics", spec: "/v1/metrics", token: ingest, body: Data("{}".utf8), status: 422)
            try await check(.get, "/healthz", spec: "/healthz", token: nil, status: 200)
            try await check(.get, "/readyz", spec: "/readyz", token: nil, status: 200)
            try await check(.get, "/v1/apps", spec: "/v1/apps", token: read, status: 200)
            try await check(.get, "/v1/alerts", spec: "/v1/alerts", token: read, status: 200)
            try await check(.get, "/v1/rules", spec: "/v1/rules", token: read, status: 200)
            let window = "from=2020-01-01&to=2026-12-31"
            for endpoint in [
                "summary", "exits", "signposts", "expiration-handlers", "restoration", "launch", "hangs", "crashes",
            ] {
                try await check(
                    .get, "/v1/apps/\(notes)/\(endpoint)?\(window)&group_by=version,day",
                    spec: "/v1/apps/{bundleId}/\(endpoint)", token: read, status: 200)
            }
            for (endpoint, query) in [
                ("metrics", "group_by=version,device"), ("metrics", "group_by=app_state&category=launch"),
                ("insights", "group_by=device"), ("perfPowerMetrics", "reference=2"),
            ] {
                try await check(
                    .get, "/v1/apps/\(notes)/\(endpoint)?\(window)&\(query)", spec: "/v1/apps/{bundleId}/\(endpoint)",
                    token: read, status: 200)
            }
            try await check(
                .get, "/v1/apps/\(notes)/metrics?category=x", spec: "/v1/apps/{bundleId}/metrics", token: read,
                status: 400)
            try await check(
                .get, "/v1/apps/\(notes)/exits?from=nope", spec: "/v1/apps/{bundleId}/exits", token: read, status: 400)
            try await check(
                .get, "/v1/apps/com.nobody/exits", spec: "/v1/apps/{bundleId}/exits", token: read, status: 404)
        }
    }
}
