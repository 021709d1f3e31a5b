import Hummingbird
import LifelineStorage
import Logging
import NIOCore

/// The request context of every Lifeline route: Hummingbird's core storage plus the caller's key,
/// set by ``AuthMiddleware``.
package struct LifelineRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The verified key of the caller; `nil` on routes that need none.
    package var apiKey: APIKey?
    /// The peer of the connection (a proxy's, behind one: see ``IngestAdmission/clientAddress(peer:forwardedFor:)``).
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.apiKey = nil
        self.remoteAddress = source.channel.remoteAddress
    }

    /// Request bodies are collected by the ingest controller under its own limit.
    package var maxUploadSize: Int { 64 << 20 }

    /// The caller's key if it has `role`, otherwise a 401/403 naming the problem.
    func requireKey(_ role: Role) throws(APIError) -> APIKey {
        guard let key = apiKey else {
            throw APIError.unauthorized("missing API key: send \"Authorization: Bearer <key>\"")
        }
        guard key.role == role else {
            throw APIError.forbidden(
                "this endpoint needs a \(role.rawValue) key; the key sent is a \(key.role.rawValue) key")
        }
        return key
    }
}
