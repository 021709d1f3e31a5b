import LifelineIngest
import LifelineStorage
import PostgresNIO

/// Bodies Lifeline cannot read yet (an unknown major version), kept raw in `unread_documents`
/// (migration `postgres/0010`) beside the ingest transactions: the `keep` half of
/// ``DocumentWriter``.
extension PostgresStore {
    /// Bodies kept raw for `app` (not read yet).
    package func unreadDocumentCount(app: String) async throws -> Int {
        for try await count in try await client.query(
            "SELECT count(*) FROM unread_documents WHERE app = \(app)", logger: logger
        ).decode(Int64.self) {
            return Int(count)
        }
        return 0
    }

    package func keep(_ document: UnreadDocument) async throws(IngestError) -> Bool {
        let (hash, raw) = (ByteBuffer(bytes: document.contentHash), ByteBuffer(bytes: document.raw))
        let detail = String(document.detail.prefix(1_000))
        do {
            return try await withDeadline(timeout, "keep") {
                try await !self.client.query(
                    """
                    INSERT INTO unread_documents (app, content_hash, received_at_ms, reason, detail, raw)
                    VALUES (\(document.app), \(hash), \(document.receivedAt), \(document.reason), \(detail), \(raw))
                    ON CONFLICT (app, content_hash) DO NOTHING RETURNING 1
                    """, logger: self.logger
                ).collect().isEmpty
            }
        } catch {
            logger.warning("postgres keep failed", metadata: ["error": "\(String(reflecting: error))"])
            throw IngestError(
                .unavailable, code: "database_unavailable",
                "the database did not store the document; nothing was acknowledged, retry later")
        }
    }
}
