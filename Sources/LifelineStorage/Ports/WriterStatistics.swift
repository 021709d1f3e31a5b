/// Counters of a store's ingest writer (SQLite's `IngestWriter`, PostgreSQL's `WriteQueue`), for
/// tests, logs and `/metrics`.
package struct WriterStatistics: Sendable, Equatable {
    /// Transactions committed (one per batch that succeeded).
    package var transactions: Int = 0
    /// Batches that failed as a whole (rolled back, every request got an error).
    package var failedBatches: Int = 0
    /// Requests answered (successfully or not).
    package var requests: Int = 0
    /// Items in answered requests.
    package var items: Int = 0
    /// Largest number of requests written in one transaction.
    package var largestBatch: Int = 0
    /// Requests waiting for the writer when the statistics were read.
    package var queued: Int = 0
    /// Documents of those requests.
    package var queuedDocuments: Int = 0
    /// Aggregator: documents acknowledged and not folded into the figures yet (answers fold them
    /// before they read: this is work behind the door, not staleness).
    package var aggregationLagDocuments: Int = 0
    /// Aggregator (SQLite): folded documents whose explorer rows the writer holds in memory, not
    /// written yet (a reader makes the writer write them first: work, not staleness).
    package var aggregationExplorerHeldDocuments: Int = 0
    /// Aggregator: age of the oldest acknowledged document not folded yet, seconds.
    package var aggregationLagSeconds: Double = 0
    /// Aggregator: fold transactions committed.
    package var folds: Int = 0
    /// Aggregator: documents folded.
    package var foldedDocuments: Int = 0
    /// Aggregator: documents the fold could not read (kept raw, counted nowhere).
    package var foldSkipped: Int = 0
    /// Raw copies the SQLite writer re-deflated against a dictionary (migration 0023), and the
    /// bytes that saved, since this process started.
    package var compactedCopies: Int = 0
    package var compactionSavedBytes: Int = 0

    package init() {}
}
