import Foundation
import Hummingbird
import LifelineIngest
import LifelineModel
import NIOCore

/// `POST /v1/metrics` and `POST /v1/diagnostics`: a thin HTTP front door over ``Ingestor``
/// (key, headers and body collection here; decode, checks, dedupe and the durable write there).
/// Answers 202 once the documents are committed to disk.
struct IngestController: Sendable {
    static let replayedHeader = HTTPFields.Element.Name("Idempotent-Replayed")
    static let idempotencyHeader = HTTPFields.Element.Name("Idempotency-Key")

    let ingestor: Ingestor
    let admission: IngestAdmission
    /// The body must arrive within this.
    var readTimeout: Duration = .seconds(30)
    var metrics: ServiceMetrics?
    static let forwardedForHeader = HTTPFields.Element.Name("X-Forwarded-For")

    private var limits: IngestLimits { ingestor.pipeline.limits }

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.post("metrics") { request, context in
            try await ingest(request, context: context, family: .metric)
        }
        group.post("diagnostics") { request, context in
            try await ingest(request, context: context, family: .diagnostic)
        }
    }

    func ingest(_ request: Request, context: LifelineRequestContext, family: DocumentFamily) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let (response, outcome) = try await accept(request, context: context, family: family)
            metrics?.ingest(
                accepted: outcome.accepted, duplicates: outcome.duplicates, refused: 0, keptRaw: outcome.keptRaw,
                duration: started.duration(to: .now))
            return response
        } catch {
            metrics?.ingest(accepted: 0, duplicates: 0, refused: 1, duration: started.duration(to: .now))
            throw error
        }
    }

    private func accept(
        _ request: Request, context: LifelineRequestContext, family: DocumentFamily
    ) async throws -> (Response, IngestOutcome) {
        let key = try context.requireKey(.ingest)
        guard let app = key.app else {
            throw APIError.forbidden("this ingest key is not bound to an app")
        }
        guard let encoding = BodyEncoding(header: request.headers[.contentEncoding]) else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_encoding",
                "Content-Encoding \"\(request.headers[.contentEncoding] ?? "")\" is not supported; send gzip or none")
        }
        let idempotencyKey = try idempotencyKey(request)
        // Admission before a byte of the body is read: rate limits, quota, disk, backpressure.
        let length = request.headers[.contentLength].flatMap { Int($0) }
        if let length, length > limits.maxBodyBytes {
            throw APIError(
                .contentTooLarge, code: "body_too_large", "body is over the limit of \(limits.maxBodyBytes) bytes")
        }
        // Never a negative reservation, whatever Content-Length says (the parser refuses those anyway).
        let wire = max(0, min(length ?? limits.maxBodyBytes, limits.maxBodyBytes))
        let reserved = encoding == .gzip ? wire + limits.inflateBudget(compressedBytes: wire) : wire
        let address = admission.clientAddress(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: Self.forwardedForHeader.flatMap { request.headers[$0] })
        try await admission.admit(keyID: key.id, app: app, address: address, bytes: reserved)
        defer { admission.release(reserved) }
        let body = try await collectBody(request)
        let outcome: IngestOutcome
        do {
            outcome = try await ingestor.ingest(
                body: body, encoding: encoding, family: family, app: app, idempotencyKey: idempotencyKey,
                receivedAt: WallClock.nowMilliseconds())
        } catch {
            if error.kind == .unavailable || error.kind == .internal {
                context.logger.error("ingest write failed", metadata: ["error": "\(error)", "app": "\(app)"])
            }
            throw APIError(error)
        }
        admission.stored(outcome.accepted, app: app)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if outcome.replayed, let name = Self.replayedHeader { headers[name] = "true" }
        return (Response(status: .accepted, headers: headers, body: .init(byteBuffer: Self.encode(outcome))), outcome)
    }

    private func idempotencyKey(_ request: Request) throws(APIError) -> String? {
        guard let name = Self.idempotencyHeader, let value = request.headers[name] else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        // Visible ASCII only, so its length is the same in bytes and in characters.
        guard !trimmed.isEmpty, trimmed.utf8.count <= limits.maxIdempotencyKeyBytes,
            trimmed.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E })
        else {
            throw APIError.badRequest(
                "invalid_idempotency_key",
                "Idempotency-Key must be 1 to \(limits.maxIdempotencyKeyBytes) visible ASCII characters")
        }
        return trimmed
    }

    /// Collects the body, refusing it with 413 as soon as it passes the limit (a declared
    /// `Content-Length` over it was refused before admission).
    private func collectBody(_ request: Request) async throws -> ByteBuffer {
        let limit = limits.maxBodyBytes
        let tooLarge = APIError(
            .contentTooLarge, code: "body_too_large", "body is over the limit of \(limit) bytes")
        var buffer = ByteBuffer()
        let deadline = ContinuousClock.now + readTimeout
        for try await chunk in request.body {
            guard buffer.readableBytes + chunk.readableBytes <= limit else { throw tooLarge }
            // A body dripping in slower than the read timeout allows (a stall is cut by the idle timeout).
            guard ContinuousClock.now < deadline else {
                throw APIError(
                    .requestTimeout, code: "read_timeout",
                    "the body did not arrive within \(readTimeout.components.seconds) s",
                    headers: [.connection: "close"])
            }
            var chunk = chunk
            buffer.writeBuffer(&chunk)
        }
        guard buffer.readableBytes > 0 else {
            throw APIError.badRequest("empty_body", "the body is empty; send one MetricKit document or an array")
        }
        return buffer
    }

    /// A JSON string literal of `text`.
    static func jsonString(_ text: String) -> String {
        (try? String(decoding: JSONEncoder().encode(text), as: UTF8.self)) ?? "\"\""
    }

    /// `{"accepted": n, "duplicates": m, "ids": [...]}` (plus `kept_raw`, `reason`, `message` for
    /// a body kept raw), written by hand: this is the hot path.
    static func encode(_ outcome: IngestOutcome) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(48 + outcome.ids.count * 8)
        out.writeString("{\"accepted\":\(outcome.accepted),\"duplicates\":\(outcome.duplicates),\"ids\":[")
        for (i, id) in outcome.ids.enumerated() {
            if i > 0 { out.writeString(",") }
            out.writeString(String(id))
        }
        out.writeString("]")
        if let reason = outcome.keptReason {
            out.writeString(",\"kept_raw\":\(outcome.keptRaw),\"reason\":")
            out.writeString(Self.jsonString(reason))
            out.writeString(",\"message\":")
            out.writeString(Self.jsonString(outcome.keptDetail ?? ""))
        }
        out.writeString("}")
        return out
    }
}
