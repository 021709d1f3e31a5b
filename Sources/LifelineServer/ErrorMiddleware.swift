import Hummingbird

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
        } catch let error as any HTTPResponseError {
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
