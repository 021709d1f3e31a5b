import Foundation
import LifelineModel
import NIOCore
import NIOPosix

/// The ingest pipeline end to end: inflate and decode (``IngestPipeline``), check the app, hash
/// for deduplication, then write through a ``DocumentWriter`` and return once durable.
/// `POST /v1/metrics`, `POST /v1/diagnostics` and `lifeline ingest` are thin front doors over it.
///
/// Inflating, decoding and hashing run on dedicated threads (``decodeThreads``), never on
/// Swift's cooperative pool; the writer has its own thread.
package struct Ingestor: Sendable {
    package var pipeline: IngestPipeline
    package let writer: any DocumentWriter

    /// Threads for inflate, decode, hash and file reads: one per core (the work is CPU-bound).
    static let decodeThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, System.coreCount))
        pool.start()
        return pool
    }()

    package init(pipeline: IngestPipeline = IngestPipeline(), writer: any DocumentWriter) {
        self.pipeline = pipeline
        self.writer = writer
    }

    /// Ingests one body.
    /// - Parameters:
    ///   - family: which documents the front door accepts (`nil`: detect per document).
    ///   - app: the bundle id the caller may write to.
    ///   - idempotencyKey: the client's `Idempotency-Key`, if any.
    ///   - receivedAt: reception time, epoch milliseconds.
    package func ingest(
        body: ByteBuffer, encoding: BodyEncoding, family: DocumentFamily?, app: String, idempotencyKey: String?,
        receivedAt: Int64
    ) async throws(IngestError) -> IngestOutcome {
        let pipeline = self.pipeline
        // What the request may be is decided here, with the configured bounds; the stores only persist.
        guard (1...IngestLimits.storedIdempotencyKeyBytes).contains(app.utf8.count) else {
            throw IngestError(.unprocessable, code: "invalid", "the app bundle id must be 1 to 255 bytes")
        }
        if let idempotencyKey, !(1...pipeline.limits.maxIdempotencyKeyBytes).contains(idempotencyKey.utf8.count) {
            throw IngestError(
                .badRequest, code: "invalid_idempotency_key",
                "Idempotency-Key must be 1 to \(pipeline.limits.maxIdempotencyKeyBytes) bytes")
        }
        let prepared: Result<[IngestItem], IngestError>
        do {
            prepared = try await Self.decodeThreads.runIfActive {
                Result { () throws(IngestError) -> [IngestItem] in
                    try pipeline.prepare(
                        body: body, encoding: encoding, family: family, app: app, receivedAt: receivedAt)
                }
            }
        } catch {
            throw IngestError(.unavailable, code: "unavailable", "the server is shutting down; retry later")
        }
        switch prepared {
        case .success(let items):
            return try await writer.write(IngestRequest(app: app, items: items, idempotencyKey: idempotencyKey))
        case .failure(let error) where error.code == "unsupported_version":
            // A format Lifeline does not read yet: kept raw, counted nowhere, never refused.
            let unread: Result<UnreadDocument, IngestError>
            do {
                unread = try await Self.decodeThreads.runIfActive {
                    Result { () throws(IngestError) -> UnreadDocument in
                        try pipeline.unread(
                            body: body, encoding: encoding, app: app, receivedAt: receivedAt, reason: error.code,
                            detail: error.message)
                    }
                }
            } catch {
                throw IngestError(.unavailable, code: "unavailable", "the server is shutting down; retry later")
            }
            let isNew = try await writer.keep(try unread.get())
            var outcome = IngestOutcome(accepted: 0, duplicates: isNew ? 0 : 1, ids: [])
            outcome.keptRaw = isNew ? 1 : 0
            outcome.keptReason = error.code
            outcome.keptDetail =
                "\(error.message); kept raw and counted nowhere until a release that reads it (lifeline refold)"
            return outcome
        case .failure(let error):
            throw error
        }
    }

    /// Ingests one file of `app` (gzip or plain JSON: detected by its magic bytes), read on the
    /// decode threads. The one file-ingest path of the command line (`ingest`, `rules test`).
    package func ingest(
        file path: String, app: String, receivedAt: Int64 = WallClock.nowMilliseconds()
    ) async throws -> IngestOutcome {
        let bytes = try await Self.decodeThreads.runIfActive {
            try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let encoding: BodyEncoding = bytes.starts(with: [0x1F, 0x8B]) ? .gzip : .identity
        return try await ingest(
            body: ByteBuffer(bytes: bytes), encoding: encoding, family: nil, app: app, idempotencyKey: nil,
            receivedAt: receivedAt)
    }
}
