import Foundation
import LifelineStorage
import Logging

/// Prepares the server's raw-copy compaction (``RawCompactor``) on a thread of its own, at the
/// readers' low CPU priority (``StoreThreads/readerNiceness``): deflating a copy against its
/// dictionary costs ~0.2 ms, which yields the cores to ingest. The writer asks for a batch when
/// the door is idle (``request()``), and writes it, in a short transaction of its own, when the
/// door is idle again (``take()``): one batch is prepared or waiting at a time.
///
/// **Who touches what.** The compactor and the read connection are this thread's alone; the
/// request, the batch and the reset cross under the condition's lock. That is why the class is
/// `@unchecked Sendable`.
final class RawCompactionWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var requested = false
    private var preparing = false
    private var ready: RawCompactor.Batch?
    private var resetRequested = false
    private var stopping = false
    private var compactor = RawCompactor()
    private let reader: Connection
    private let logger: Logger
    /// Called on this thread when a batch is ready (it wakes the writer).
    private let onReady: @Sendable () -> Void
    /// After a failed prepare, the next one waits this long.
    private var retryAfter: ContinuousClock.Instant?

    /// `reader`: a connection of the same database, used on this thread only.
    init(reader: Connection, logger: Logger, onReady: @escaping @Sendable () -> Void) {
        self.reader = reader
        self.logger = logger
        self.onReady = onReady
        let thread = Thread { [self] in run() }
        thread.name = "lifeline-compactor"
        thread.start()
    }

    /// Asks for the next batch; `false` when one is being prepared or waits to be taken.
    func request() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !requested, !preparing, ready == nil, !stopping else { return false }
        requested = true
        condition.broadcast()
        return true
    }

    /// The batch prepared, if one waits.
    func take() -> RawCompactor.Batch? {
        condition.lock()
        defer { condition.unlock() }
        let batch = ready
        ready = nil
        return batch
    }

    /// The next prepare forgets the dictionaries it knew (another process wrote some).
    func reset() {
        condition.lock()
        resetRequested = true
        condition.unlock()
    }

    /// Ends the thread once the prepare under way (if any) is done.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        StoreThreads.lowerReaderPriority()
        while true {
            condition.lock()
            while !requested, !stopping { condition.wait() }
            if stopping {
                condition.unlock()
                reader.close()
                return
            }
            requested = false
            preparing = true
            if resetRequested {
                compactor.reset()
                resetRequested = false
            }
            condition.unlock()
            if let retryAfter, ContinuousClock.now < retryAfter {
                Thread.sleep(forTimeInterval: Double((retryAfter - .now) / .milliseconds(1)) / 1_000)
            }
            var batch: RawCompactor.Batch?
            do throws(StoreError) {
                batch = try compactor.prepare(on: reader)
                retryAfter = nil
            } catch {
                logger.warning(
                    "raw copies could not be compacted; tried again after the next fold, 5 s at the earliest",
                    metadata: ["error": "\(error)"])
                retryAfter = .now + .seconds(5)
                compactor.reset()
            }
            condition.lock()
            preparing = false
            ready = batch
            condition.unlock()
            if batch != nil { onReady() }
        }
    }
}
