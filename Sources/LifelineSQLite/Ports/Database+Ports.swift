import LifelineModel
import LifelineStorage

/// The SQLite database as the server's key and session store: each call on a store thread.
extension Database: KeyStore, SessionStore {
    package func verifyKey(token: String) async throws -> APIKey? {
        try await onStoreThread { try $0.verify(token: token) }
    }

    package func recordKeyUses(_ uses: [String: Int64]) async throws {
        try await onStoreThread { try $0.recordKeyUse(uses) }
    }

    package func startSession(keyID: String, ttl: Int64) async throws -> String {
        try await onStoreThread { try $0.createSession(keyID: keyID, ttl: ttl) }
    }

    package func sessionKey(forSession sessionID: String) async throws -> APIKey? {
        try await onStoreThread { try $0.sessionKey(sessionID) }
    }

    package func endSession(_ sessionID: String) async throws {
        try await onStoreThread { try $0.deleteSession(sessionID) }
    }
}

/// The SQLite store's health: the database answers, and its one writer takes work.
package struct SQLiteHealth: StoreHealth {
    package let database: Database
    package let writer: IngestWriter

    package init(database: Database, writer: IngestWriter) {
        self.database = database
        self.writer = writer
    }

    package func ping() async throws {
        _ = try await database.onStoreThread { try $0.ping() }
    }

    package var isAcceptingWrites: Bool { writer.isAccepting }

    package var writerStatistics: WriterStatistics { writer.statistics }

    package var batches: BatchObserver { writer.batches }

    package func receivedDocuments(app: String, since: Int64) async throws -> Int {
        try await database.onStoreThread { try $0.documentsReceived(app: app, since: since) }
    }
}

extension Pruner: RetentionRunner {
    /// One run of the policy (SQLite has one process: it always prunes).
    package func pruneOnce() async throws -> PruneReport? {
        try await run()
    }
}
