import Foundation
import Hummingbird
import LifelineStorage

/// Reads `Authorization: Bearer <key>` and puts the verified key in the context.
///
/// A request without the header passes through with no key (routes that need one refuse it with
/// 401); a header with an unknown or revoked key is refused here with 401.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = LifelineRequestContext
    let keys: KeyCache

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            return try await next(request, context)
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.unauthorized("Authorization header must be \"Bearer <key>\"")
        }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let key: APIKey?
        do {
            key = try await keys.key(for: token)
        } catch {
            context.logger.error("key verification failed", metadata: ["error": "\(error)"])
            // The key store is the database: the same answer as any request it cannot serve now.
            throw APIError(
                .serviceUnavailable, code: "database_unavailable",
                "keys cannot be verified right now: the database is unavailable; retry later",
                headers: [.retryAfter: "5"])
        }
        guard let key else {
            throw APIError.unauthorized("unknown or revoked API key")
        }
        var context = context
        context.apiKey = key
        return try await next(request, context)
    }
}
