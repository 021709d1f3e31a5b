import Hummingbird
import LifelineAnalysis
import LifelineStorage

/// Makes every error answer JSON `{"error": {"code", "message"}}`: Hummingbird's own errors
/// (unknown route, wrong method) are re-shaped, and unexpected errors become a 500 that leaks nothing.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = LifelineRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as ReadLimitError {
            // A read past its bounds (`query:`): too large is the client's to narrow, the others pass.
            context.logger.notice("read refused", metadata: ["error": "\(error)"])
            switch error.code {
            case .tooLarge: throw APIError(.unprocessableContent, code: error.code.rawValue, error.message)
            case .timeout:
                throw APIError(
                    .serviceUnavailable, code: error.code.rawValue, error.message, headers: [.retryAfter: "5"])
            case .busy:
                throw APIError(
                    .serviceUnavailable, code: error.code.rawValue, error.message, headers: [.retryAfter: "1"])
            }
        } catch let error as StoreError where error.code == .unavailable {
            // The database is unreachable, restarting, or past its time bound: the client may retry.
            context.logger.warning("database unavailable", metadata: ["error": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: "database_unavailable",
                "the database is unavailable (\(error.message)); retry later", headers: [.retryAfter: "5"])
        } catch let error as any HTTPResponseError {
            if error.status == .notFound, let allowed = RouteTable.methods(for: request.uri.path),
                !allowed.contains(request.method)
            {
                throw APIError(
                    .methodNotAllowed, code: "method_not_allowed",
                    "\(request.method) is not allowed on \(request.uri.path); allowed: "
                        + allowed.map(\.rawValue).joined(separator: ", "),
                    headers: [.allow: allowed.map(\.rawValue).joined(separator: ", ")])
            }
            let code: String =
                switch error.status {
                case .notFound: "not_found"
                case .methodNotAllowed: "method_not_allowed"
                case .contentTooLarge: "body_too_large"
                default: "http_\(error.status.code)"
                }
            let message: String =
                switch error.status {
                case .notFound: "no route for \(request.method) \(request.uri.path)"
                default: error.status.reasonPhrase
                }
            throw APIError(error.status, code: code, message)
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(error)"])
            throw APIError(.internalServerError, code: "internal", "internal error")
        }
    }
}

/// The routes Lifeline serves and their methods, so a known path with the wrong method is a 405
/// with `Allow` (Hummingbird's router answers 404 for both). `*` is one path segment.
enum RouteTable {
    static let routes: [(pattern: [Substring], methods: [HTTPRequest.Method])] = [
        ("/", [.get]), ("/login", [.post]), ("/logout", [.post]), ("/healthz", [.get]), ("/readyz", [.get]),
        ("/openapi.yaml", [.get]), ("/metrics", [.get]), ("/-/reload", [.post]), ("/v1/metrics", [.post]),
        ("/v1/diagnostics", [.post]), ("/v1/apps", [.get]), ("/v1/alerts", [.get]), ("/v1/rules", [.get]),
        ("/v1/apps/*/summary", [.get]), ("/v1/apps/*/exits", [.get]), ("/v1/apps/*/signposts", [.get]),
        ("/v1/apps/*/expiration-handlers", [.get]), ("/v1/apps/*/restoration", [.get]),
        ("/v1/apps/*/launch", [.get]), ("/v1/apps/*/hangs", [.get]), ("/v1/apps/*/crashes", [.get]),
        ("/v1/apps/*/crashes/*", [.get]),
    ].map { (pattern: Substring($0.0).split(separator: "/"), methods: $0.1) }

    /// The methods served on `path`, or `nil` when no route has that shape.
    static func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = Substring(path).split(separator: "/")
        for route in routes where route.pattern.count == segments.count {
            if zip(route.pattern, segments).allSatisfy({ $0 == "*" || $0 == $1 }) {
                return route.methods
            }
        }
        return nil
    }
}
