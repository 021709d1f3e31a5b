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

    /// Wakes the writer thread (a reader asks for a fold).
    func wake() { wakeup.signal() }

    private func record(_ fold: BatchWriter.FoldResult) {
        state.withLock { state in
            state.statistics.folds += 1
            state.statistics.foldedDocuments += fold.folded
            state.statistics.foldSkipped += fold.skipped
        }
    }

    private func record(_ compaction: RawCompactor.Batch) {
        state.withLock { state in
            state.statistics.compactedCopies += compaction.copies.count
            state.statistics.compactionSavedBytes += compaction.bytesBefore - compaction.bytesAfter
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

    /// While the door is busy, the compactor's batches are asked for at most this often (a
    /// batch of ``RawCompactor/batchSize`` costs ~35 ms of CPU on the compactor's thread and a
    /// few on the writer's); once it has been idle this long, back to back.
    static let compactionInterval: Duration = .seconds(1)
    static let compactionQuiet: Duration = .milliseconds(250)

    /// Documents folded at most in one fold while requests wait at the door (no reader waiting):
    /// the door's next batch waits for the fold.
    static let busyFoldBatch = 128
    /// The door counts as busy this long after its last batch.
    static let doorBusyWindow: Duration = .milliseconds(20)

    /// The writer thread's body: door batches as they come, and the fold behind them — when a
    /// reader waits for it, when the oldest unfolded document is older than
    /// ``IngestWriter/Options/foldDelay``, when ``IngestWriter/Options/foldBatch`` documents wait,
    /// and whenever the door is idle.
    static func loop(
        _ queue: WriterQueue, _ writer: BatchWriter, progress: FoldProgress, checkpointer: Checkpointer?,
        walLimit: WALLimit? = nil, compaction: RawCompactionWorker? = nil, logger: Logger
    ) {
        let options = queue.options
        var walLimit = walLimit
        var retryAfter: ContinuousClock.Instant?
        /// Whether the compactor may find folded payloads above its watermark (at the start, after
        /// a fold, after a batch that was not the last).
        var compactionDue = compaction != nil
        /// The last door batch and the last compaction batch asked for: while requests keep
        /// coming, a batch is asked for at most every ``compactionInterval``; once the door has
        /// been quiet for ``compactionQuiet``, back to back.
        var lastDoorBatch = ContinuousClock.now
        var lastCompaction = ContinuousClock.now - compactionInterval
        func compactionAllowedAt() -> ContinuousClock.Instant {
            min(lastDoorBatch + compactionQuiet, lastCompaction + compactionInterval)
        }
        /// Whether the door wrote a batch a moment ago: requests are likely on their way (the
        /// clients answered send their next), and a long fold would hold them back.
        func doorBusy() -> Bool { ContinuousClock.now - lastDoorBatch < Self.doorBusyWindow }
        /// After every commit, the door's or the fold's: the WAL's soft and hard caps.
        func committed() {
            checkpointer?.committed()
            walLimit?.enforce(on: writer.connection, logger: logger)
        }
        /// Folds once; false when there was nothing to fold or it failed. Every held figure is
        /// written when `writeExplorer` or a reader of the explorer's rows waits; the rollups'
        /// alone when only other readers wait.
        func foldOnce(writeExplorer: Bool = false, doorWaits: Bool = false) -> Bool {
            if let retryAfter, ContinuousClock.now < retryAfter { return false }
            do throws(StoreError) {
                let readers = progress.readerWaits
                let result = try writer.fold(
                    limit: doorWaits && !readers.any ? min(options.foldBatch, Self.busyFoldBatch) : options.foldBatch,
                    writeRollups: readers.any,
                    writeExplorer: writeExplorer || readers.explorer
                ) { id, error in
                    logger.warning(
                        "a document could not be folded: it stays stored raw and counts nowhere",
                        metadata: ["payload": "\(id)", "error": "\(error)"])
                }
                retryAfter = nil
                // Nothing else writes on this thread meanwhile: without more documents above the
                // watermark, everything acknowledged is folded (or was pruned before its fold).
                // The counters first: a reader released by the progress sees them counted.
                if result.folded > 0 { queue.record(result) }
                progress.folded(
                    through: result.through, count: result.folded, caughtUp: !result.more,
                    explorerHeld: result.explorerHeld, rollupsHeld: result.rollupsHeld)
                guard result.folded > 0 else { return false }
                compactionDue = compaction != nil
                committed()
                return result.more
            } catch {
                logger.error("fold failed; retried in 1 s", metadata: ["error": "\(error)"])
                retryAfter = ContinuousClock.now + .seconds(1)
                return false
            }
        }
        /// Moves the door's tail of stored contents into the lookup tables when due (its size, or
        /// its age when `idle`): whether it did.
        func mergeKeys(idle: Bool) -> Bool {
            do throws(StoreError) {
                guard try writer.mergeKeysIfDue(idle: idle) else { return false }
                committed()
                return true
            } catch {
                // The tail stays in memory and answers the door; merged at the next chance.
                logger.warning("the payload lookup tables could not be filled", metadata: ["error": "\(error)"])
                return false
            }
        }
        /// Writes a compaction batch; whether the compactor should go on at once.
        func apply(_ batch: RawCompactor.Batch, _ compaction: RawCompactionWorker) -> Bool {
            do throws(StoreError) {
                guard try RawCompactor.apply(batch, on: writer.connection) else {
                    compaction.reset()
                    return true
                }
                queue.record(batch)
                committed()
                return true
            } catch {
                logger.warning("compacted raw copies could not be written", metadata: ["error": "\(error)"])
                return false
            }
        }
        loop: while true {
            if progress.foldDue(batch: options.foldBatch, delay: options.foldDelay) {
                // The door is busy when requests wait, or came a moment ago (the clients answered
                // read their reply and send the next).
                _ = foldOnce(doorWaits: doorBusy() || queue.state.withLock { !$0.queue.isEmpty })
            }
            switch queue.next() {
            case .batch(let batch):
                lastDoorBatch = .now
                let result = writer.write(batch.map(\.request))
                if !result.committed, case .failure(let error) = result.results.first {
                    logger.error(
                        "ingest batch rolled back", metadata: ["requests": "\(batch.count)", "error": "\(error)"])
                }
                queue.record(batch, result)
                if result.committed {
                    committed()
                    if let last = result.stored.last {
                        progress.acknowledged(through: last.payloadID, count: result.stored.count)
                    }
                }
                for (pending, outcome) in zip(batch, result.results) {
                    pending.reply.resume(returning: outcome)
                }
                queue.onBatch?(batch.count)
                if result.committed { _ = mergeKeys(idle: false) }
            case .idle:
                let waiting = retryAfter.map { ContinuousClock.now < $0 } ?? false
                if !waiting, progress.hasBacklog || writer.figuresDue {
                    _ = foldOnce(doorWaits: doorBusy())
                    continue loop
                }
                // Folded documents whose explorer rows are neither stored nor held (the start
                // after a crash, a failed fold): replayed and written now.
                if !waiting, progress.explorerBehind, !writer.holdsFigures {
                    _ = foldOnce(writeExplorer: true)
                    continue loop
                }
                if !waiting, mergeKeys(idle: true) { continue loop }
                // Last, raw copies re-deflated behind the fold (RawCompactionWorker): a prepared
                // batch is written now, and the next one asked for.
                if let compaction {
                    if let batch = compaction.take() {
                        if !batch.isEmpty { compactionDue = apply(batch, compaction) }
                        continue loop
                    }
                    if compactionDue, ContinuousClock.now >= compactionAllowedAt(), compaction.request() {
                        compactionDue = false
                        lastCompaction = .now
                    }
                }
                // Woken then to ask for the next batch (a batch being prepared wakes the writer itself).
                let compactionAt =
                    compactionDue && ContinuousClock.now < compactionAllowedAt() ? compactionAllowedAt() : nil
                if progress.hasBacklog || waiting {
                    _ = queue.wakeup.wait(timeout: .now() + .milliseconds(250))
                } else if let due = [writer.figuresDueAt, compactionAt, writer.keys.idleMergeAt].compactMap({ $0 })
                    .min()
                {
                    let milliseconds = min(1_000, max(1, Int((due - .now) / .milliseconds(1)) + 1))
                    _ = queue.wakeup.wait(timeout: .now() + .milliseconds(milliseconds))
                } else {
                    queue.wakeup.wait()
                }
            case .finished:
                // Everything acknowledged is folded before the writer stops (a stop cut short by
                // the shutdown deadline leaves the rest to the next start, from the raw copies).
                while progress.hasBacklog {
                    if !foldOnce(writeExplorer: true) { break }
                }
                if progress.explorerBehind { _ = foldOnce(writeExplorer: true) }
                break loop
            }
        }
        progress.detach()
        compaction?.stop()
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
