import Hummingbird
import HummingbirdTesting
import LifelineServer

extension TemporaryDatabase {
    /// Runs `body` against a live Lifeline server (real sockets on 127.0.0.1, a free port) on this
    /// database, built from ``config(options:limits:)`` changed by `configure`.
    package func withLiveServer(
        configure: (inout ServerConfig) throws -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var config = self.config()
        try configure(&config)
        let app = try await buildApplication(config)
        try await app.test(.live) { client in try await body(client) }
    }
}
