import LifelineIngest
import LifelineStorage

extension Database {
    /// Keeps a body Lifeline cannot read yet, raw, once per app and content (migration 0013).
    /// Returns whether it was new. Durable when it returns (this object's connection, its own
    /// transaction).
    package func keepUnread(_ document: UnreadDocument) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) -> Bool in
            try connection.run(
                """
                INSERT INTO unread_documents (app, content_hash, received_at_ms, reason, detail, raw)
                VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (app, content_hash) DO NOTHING
                """,
                [
                    .text(document.app), .blob(document.contentHash), .integer(document.receivedAt),
                    .text(document.reason), .text(String(document.detail.prefix(1_000))), .blob(document.raw),
                ]) == 1
        }
    }
}

extension Database {
    /// Bodies kept raw for `app` (not read yet).
    package func unreadDocumentCount(app: String) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) -> Int in
            Int(
                try connection.first("SELECT count(*) FROM unread_documents WHERE app = ?", [.text(app)]) {
                    $0.int64(0)
                } ?? 0)
        }
    }
}
