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

    package init() {}
}
