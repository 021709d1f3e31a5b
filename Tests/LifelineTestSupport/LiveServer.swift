import Hummingbird
import HummingbirdTesting
import LifelineIngest
import LifelineBackends
import LifelineServer
import LifelineSQLite

extension TemporaryDatabase {
    /// Runs `body` against a live Lifeline server (real sockets on 127.0.0.1, a free port) on this
    /// database, configured by ``config(options:limits:)``.
    package func withLiveServer<Value: Sendable>(
        options: Database.Options = .init(), limits: IngestLimits = .init(),
        _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        try await Self.withLiveServer(config(options: options, limits: limits), body)
    }

    /// Runs `body` against a live Lifeline server built from `config`.
    package static func withLiveServer<Value: Sendable>(
        _ config: ServerConfig, _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let app = try await buildApplication(config)
        return try await app.test(.live) { client in try await body(client) }
    }
}

/// An answer of ``requestPatiently(port:uri:method:headers:body:)``.
package struct PatientResponse: Sendable {
    package var status: HTTPResponse.Status
    package var body: ByteBuffer
}

/// Sends one request to the live server on `port` on a connection of its own and waits up to two
/// minutes for the answer.
///
/// The live test client gives a request 20 s in all. An upload of tens of megabytes can take
/// longer while the whole suite shares two cores; the bound under test is the server's, not this.
/// A test that uses it for some requests uses it for all: the live client's one connection, idle
/// meanwhile, may be closed by the server's idle timeout ("I/O on closed channel").
package func requestPatiently(
    port: Int, uri: String, method: HTTPRequest.Method = .post, headers: HTTPFields = [:], body: ByteBuffer? = nil
) async throws -> PatientResponse {
    try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120))) {
        client in
        let answer = try await client.execute(
            TestClient.Request(uri, method: method, authority: "127.0.0.1", headers: headers, body: body))
        return PatientResponse(status: answer.status, body: answer.body ?? ByteBuffer())
    }
}
