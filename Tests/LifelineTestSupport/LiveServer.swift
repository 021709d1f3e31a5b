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
