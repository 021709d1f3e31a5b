import LifelineModel
import LifelineStorage

/// The PostgreSQL store as the server's key, session and health store.
extension PostgresStore: KeyStore, SessionStore, StoreHealth {
    // Each within the store's time bound: a key check that waits on a lost database must not hold
    // every authenticated request.

    package func verifyKey(token: String) async throws -> APIKey? {
        try await withDeadline(timeout, "verify key") { try await self.verify(token: token) }
    }

    package func recordKeyUses(_ uses: [String: Int64]) async throws {
        try await withDeadline(timeout, "record key use") { try await self.recordKeyUse(uses) }
    }

    package func startSession(keyID: String, ttl: Int64) async throws -> String {
        try await withDeadline(timeout, "start session") {
            try await self.createSession(keyID: keyID, ttl: ttl, now: WallClock.nowSeconds())
        }
    }

    package func sessionKey(forSession sessionID: String) async throws -> APIKey? {
        try await withDeadline(timeout, "session") { try await self.sessionKey(sessionID, now: WallClock.nowSeconds()) }
    }

    package func endSession(_ sessionID: String) async throws {
        try await withDeadline(timeout, "end session") { try await self.deleteSession(sessionID) }
    }

    package func receivedDocuments(app: String, since: Int64) async throws -> Int {
        try await withDeadline(timeout, "quota") { try await self.documentsReceived(app: app, since: since) }
    }

    /// Every node writes; there is no single writer to stop.
    package var isAcceptingWrites: Bool { true }

    package var writerStatistics: WriterStatistics {
        var statistics = writeQueue.statistics
        let counters = aggregation.withLock { $0 }
        statistics.aggregationLagDocuments = counters.lagDocuments
        statistics.aggregationLagSeconds = counters.lagSeconds
        statistics.folds = counters.folds
        statistics.foldedDocuments = counters.foldedDocuments
        statistics.foldSkipped = counters.skipped
        return statistics
    }

    package var batches: BatchObserver { writeQueue.batches }
}

/// Retention on PostgreSQL: only the leader prunes, the other nodes' runs return nil.
package struct PostgresRetention: RetentionRunner {
    package let store: PostgresStore
    package let policy: RetentionPolicy
    package let leader: @Sendable () -> Bool

    package init(store: PostgresStore, policy: RetentionPolicy, leader: @escaping @Sendable () -> Bool) {
        self.store = store
        self.policy = policy
        self.leader = leader
    }

    package func pruneOnce() async throws -> PruneReport? {
        guard leader() else { return nil }
        return try await store.prune(policy: policy)
    }
}
