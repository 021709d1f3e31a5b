import Synchronization

/// Told the number of requests of every transaction a store's ingest writer commits (the
/// `lifeline_writer_batch_requests` histogram). Set once by the server; called on the writer's own
/// thread or task, so what it does must be cheap.
package final class BatchObserver: Sendable {
    private let observer = Mutex<(@Sendable (Int) -> Void)?>(nil)

    package init() {}

    /// Replaces the observer.
    package func set(_ body: @escaping @Sendable (Int) -> Void) {
        observer.withLock { $0 = body }
    }

    /// A batch of `requests` requests was committed.
    package func batchCommitted(requests: Int) {
        observer.withLock { $0 }?(requests)
    }
}
