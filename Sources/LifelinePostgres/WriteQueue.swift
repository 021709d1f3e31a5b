import LifelineIngest
import LifelineStorage
import NIOCore
import Synchronization

/// One request to write (its items as ingest decided them: day, device, format…).
package struct WriteJob: Sendable {
    var request: IngestRequest
    var items: [IngestItem] { request.items }

    /// `request` to write (for tests: ``PostgresStore/write(_:)`` validates first).
    package init(_ request: IngestRequest) {
        self.request = request
    }
}

/// Groups the requests of a node into transactions, as the SQLite writer's group commit does:
/// up to `writers` transactions run at once; each takes what waits when it starts (at most
/// ``maxRequests`` requests and ``maxItems`` documents), so a busy node commits many requests per
/// transaction (fewer round trips, one WAL flush, one append of the batch's documents) while a
/// quiet one commits each at once. Every request is answered after its
/// transaction's COMMIT. When a batch of several fails, each request is written again on its own,
/// so one bad request does not fail the others. The queue holds what the server admitted (its
/// in-flight byte budget bounds it).
final class WriteQueue: Sendable {
    private struct Waiting: Sendable {
        var job: WriteJob
        var continuation: CheckedContinuation<IngestOutcome, any Error>
    }

    private struct State {
        var waiting = CircularBuffer<Waiting>()
        var writers = 0
        /// Counters for `/metrics` (``statistics``); the queue fields are filled when read.
        var statistics = WriterStatistics()
    }

    private let state = Mutex(State())
    /// Told the number of requests of every batch written.
    let batches = BatchObserver()
    let writers: Int
    let maxRequests: Int
    let maxItems: Int

    init(writers: Int, maxRequests: Int = 32, maxItems: Int = 512) {
        self.writers = max(1, writers)
        self.maxRequests = max(1, maxRequests)
        self.maxItems = max(1, maxItems)
    }

    /// The writer's counters now: requests waiting, grouped transactions, batches that failed whole.
    var statistics: WriterStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queued = state.waiting.count
            statistics.queuedDocuments = state.waiting.reduce(0) { $0 + $1.job.items.count }
            return statistics
        }
    }

    /// Queues `job` and waits for its transaction.
    func submit(_ job: WriteJob, to store: PostgresStore) async throws -> IngestOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.waiting.append(Waiting(job: job, continuation: continuation))
                guard state.writers < writers else { return false }
                state.writers += 1
                return true
            }
            if start { Task { await self.drain(store) } }
        }
    }

    /// The next batch, or nil (and one writer fewer) when nothing waits.
    private func next() -> [Waiting]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.writers -= 1
                return nil
            }
            var batch: [Waiting] = []
            var items = 0
            while let first = state.waiting.first,
                batch.isEmpty || (batch.count < maxRequests && items + first.job.items.count <= maxItems)
            {
                batch.append(state.waiting.removeFirst())
                items += first.job.items.count
            }
            return batch
        }
    }

    /// Writes batches until the queue is empty.
    private func drain(_ store: PostgresStore) async {
        while let batch = next() {
            let results = await store.writeGrouped(batch.map(\.job))
            state.withLock { state in
                let failed = results.allSatisfy { if case .failure = $0 { true } else { false } }
                state.statistics.transactions += failed ? 0 : 1
                state.statistics.failedBatches += failed ? 1 : 0
                state.statistics.requests += batch.count
                state.statistics.items += batch.reduce(0) { $0 + $1.job.items.count }
                state.statistics.largestBatch = max(state.statistics.largestBatch, batch.count)
            }
            batches.batchCommitted(requests: batch.count)
            for (waiting, result) in zip(batch, results) {
                waiting.continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }
}
