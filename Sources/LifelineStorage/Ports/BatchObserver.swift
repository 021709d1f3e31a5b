import Synchronization

/// Told the number of requests of every transaction a store's ingest writer commits (the
/// `lifeline_writer_batch_requests` histogram). Set once by the server; called on the writer's own
/// thread or task, so what it does must be cheap.
package final class BatchObserver: Sendable {
    /// The observer, inside a struct. A closure held by the lock as its value itself (a
    /// `Mutex<(@Sendable (Int) -> Void)?>`) came back from every `withLock { $0 }` wrapped in two
    /// more reabstraction thunks, written back into the lock: each call ran through one thunk
    /// pair per call before it, linear in the transactions committed (3 % of the writer's thread
    /// after 12 s of load, a stack overflow after enough of them). A struct's field keeps its
    /// closure as it is.
    private struct Observer {
        var body: (@Sendable (Int) -> Void)?
    }

    private let observer = Mutex(Observer())

    package init() {}

    /// Replaces the observer.
    package func set(_ body: @escaping @Sendable (Int) -> Void) {
        observer.withLock { $0.body = body }
    }

    /// A batch of `requests` requests was committed.
    package func batchCommitted(requests: Int) {
        observer.withLock { $0.body }?(requests)
    }
}
