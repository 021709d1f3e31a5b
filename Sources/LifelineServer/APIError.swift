import Foundation
import Hummingbird
import LifelineModel
import LifelineIngest
import LifelineStorage

/// An error answered to a client: an HTTP status and `{"error": {"code", "message"}}`.
///
/// Every refusal at the HTTP edge goes through this type, so clients always get JSON that names
/// what was wrong with their input, and internals (SQL, file paths) never leak.
package struct APIError: HTTPResponseError, Sendable {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`).
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body = ErrorBody(error: .init(code: code, message: message))
        let data = try JSONEncoder().encode(body)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    struct ErrorBody: Codable {
        struct Detail: Codable {
            var code: String
            var message: String
        }
        var error: Detail
    }
}

extension APIError {
    static func unauthorized(_ message: String) -> APIError {
        APIError(
            .unauthorized, code: "unauthorized", message,
            headers: [.wwwAuthenticate: "Bearer realm=\"lifeline\""])
    }

    static func forbidden(_ message: String) -> APIError {
        APIError(.forbidden, code: "forbidden", message)
    }

    static func badRequest(_ code: String, _ message: String) -> APIError {
        APIError(.badRequest, code: code, message)
    }

    static func unavailable(_ message: String) -> APIError {
        APIError(.serviceUnavailable, code: "unavailable", message, headers: [.retryAfter: "5"])
    }

    /// Maps an ingest refusal to its HTTP answer.
    init(_ error: IngestError) {
        switch error.kind {
        case .badRequest: self.init(.badRequest, code: error.code, error.message)
        case .forbidden: self.init(.forbidden, code: error.code, error.message)
        case .tooLarge: self.init(.contentTooLarge, code: error.code, error.message)
        case .unprocessable: self.init(.unprocessableContent, code: error.code, error.message)
        case .unavailable:
            self.init(.serviceUnavailable, code: error.code, error.message, headers: [.retryAfter: "5"])
        case .internal: self.init(.internalServerError, code: error.code, error.message)
        }
    }

    /// Maps a store error to its HTTP answer; the store's own message stays in the log.
    init(_ error: StoreError) {
        switch error.code {
        case .unavailable:
            self.init(
                .serviceUnavailable, code: "database_unavailable",
                "the database cannot take the request now; nothing was stored, retry later",
                headers: [.retryAfter: "5"])
        case .invalid:
            self.init(.unprocessableContent, code: "invalid", error.message)
        case .notFound:
            self.init(.notFound, code: "not_found", error.message)
        default:
            self.init(.internalServerError, code: "internal", "internal error")
        }
    }
}
