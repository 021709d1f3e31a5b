import LifelineIngest
import Dispatch
import LifelineStorage
import Logging
import Synchronization

/// The queue between ``IngestWriter/submit(_:)`` callers and the writer thread.
final class WriterQueue: Sendable {
    typealias Reply = CheckedContinuation<Result<IngestOutcome, StoreError>, Never>

    struct Pending {
        var request: IngestRequest
        var reply: Reply
    }

    enum Phase {
        case running
        case draining
        case stopped
    }

    struct State {
        var phase = Phase.running
        var queue: [Pending] = []
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var statistics = WriterStatistics()
    }

    enum Next {
        case batch([Pending])
        case idle
        case finished
    }

    let options: IngestWriter.Options
    /// Told the number of requests of every batch written, on the writer thread (for metrics).
    let onBatch: (@Sendable (Int) -> Void)?
    private let state = Mutex(State())
    /// Signalled once per enqueue and once per shutdown request; the thread waits on it when idle.
    private let wakeup = DispatchSemaphore(value: 0)

    init(options: IngestWriter.Options, onBatch: (@Sendable (Int) -> Void)? = nil) {
        self.options = options
        self.onBatch = onBatch
    }

    var statistics: WriterStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queued = state.queue.count
            statistics.queuedDocuments = state.queue.reduce(0) { $0 + $1.request.items.count }
            return statistics
        }
    }

    var isAccepting: Bool { state.withLock { $0.phase == .running } }

    func enqueue(_ request: IngestRequest, _ reply: Reply) {
        let accepted = state.withLock { state in
            guard state.phase == .running else { return false }
            state.queue.append(Pending(request: request, reply: reply))
            return true
        }
        if accepted {
            wakeup.signal()
        } else {
            reply.resume(returning: .failure(StoreError(.unavailable, "the writer is shut down")))
        }
    }

    func beginShutdown(waiter: CheckedContinuation<Void, Never>?) {
        let stopped = state.withLock { state in
            if state.phase == .stopped { return true }
            state.phase = .draining
            if let waiter { state.stopWaiters.append(waiter) }
            return false
        }
        if stopped {
            waiter?.resume()
        } else {
            wakeup.signal()
        }
    }

    private func next() -> Next {
        state.withLock { state in
            guard !state.queue.isEmpty else { return state.phase == .running ? .idle : .finished }
            var items = 0
            var count = 0
            for pending in state.queue {
                let size = pending.request.items.count
                if count > 0, count >= options.maxBatchRequests || items + size > options.maxBatchItems { break }
                count += 1
                items += size
            }
            let batch = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            return .batch(batch)
        }
    }

    private func record(_ batch: [Pending], _ result: BatchWriter.BatchResult) {
        state.withLock { state in
            if result.committed { state.statistics.transactions += 1 } else { state.statistics.failedBatches += 1 }
            state.statistics.requests += batch.count
            state.statistics.items += batch.reduce(0) { $0 + $1.request.items.count }
            state.statistics.largestBatch = max(state.statistics.largestBatch, batch.count)
        }
    }

    /// The writer thread's body.
    static func loop(_ queue: WriterQueue, _ writer: BatchWriter, checkpointer: Checkpointer?, logger: Logger) {
        loop: while true {
            switch queue.next() {
            case .batch(let batch):
                let result = writer.write(batch.map(\.request))
                if !result.committed, case .failure(let error) = result.results.first {
                    logger.error(
                        "ingest batch rolled back", metadata: ["requests": "\(batch.count)", "error": "\(error)"])
                }
                queue.record(batch, result)
                if result.committed { checkpointer?.committed() }
                for (pending, outcome) in zip(batch, result.results) {
                    pending.reply.resume(returning: outcome)
                }
                queue.onBatch?(batch.count)
            case .idle:
                queue.wakeup.wait()
            case .finished:
                break loop
            }
        }
        checkpointer?.stop()
        writer.close()
        let waiters = queue.state.withLock { state in
            state.phase = .stopped
            let waiters = state.stopWaiters
            state.stopWaiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
