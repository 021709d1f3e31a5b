/// What the server asks a store about itself: `/readyz`, `/metrics` and the ingest quota.
package protocol StoreHealth: Sendable {
    /// One round trip to the database (`/readyz` bounds the wait: one second).
    func ping() async throws
    /// Whether the writer takes work (false once it has shut down).
    var isAcceptingWrites: Bool { get }
    /// The writer's counters now (queue depth, transactions, failed batches).
    var writerStatistics: WriterStatistics { get }
    /// Told the size of every committed batch.
    var batches: BatchObserver { get }
    /// Documents stored for `app` since `since` (epoch milliseconds of arrival): the daily quota.
    func receivedDocuments(app: String, since: Int64) async throws -> Int
}

/// Applies the retention policy once: what the server's retention service runs every interval
/// (SQLite: the pruner on the database's connection; PostgreSQL: on the leader only).
package protocol RetentionRunner: Sendable {
    /// One pruning run; `nil` when this node does not prune now (a PostgreSQL follower).
    func pruneOnce() async throws -> PruneReport?
}
