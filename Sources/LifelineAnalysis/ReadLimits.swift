import Foundation
import Synchronization

/// The bounds on every figure read of a server (`query:` in the config file): what one read may
/// materialise, how long it may run, and how many run at once. One ``AnalysisRunner`` call is one
/// read. The HTTP row cap per answer (`query.max_rows`) is the query endpoints' own (see the
/// README, "Bounded reads").
package struct ReadLimits: Sendable, Equatable {
    /// Rows one read may materialise from the store, counted as they are read: every result row of
    /// a SQL query and every distinct row a store builds from packed rollup cells or histograms
    /// (`query.max_source_rows`, default 100,000). Past it the read fails with
    /// ``ReadLimitError/Code/tooLarge``; memory per read is proportional to it whatever the group-by.
    package var maxSourceRows = 100_000
    /// How long one read may run once it has its slot (`query.timeout_seconds`, default 10 s): a
    /// SQLite statement is interrupted at the deadline, a PostgreSQL statement gets the time left as
    /// its `statement_timeout`. Past it: ``ReadLimitError/Code/timeout``.
    package var timeout: Duration = .seconds(10)
    /// Reads running at once through one runner (`query.max_concurrent`, default twice the cores,
    /// at least 4). The others wait up to ``queueWait`` for a slot, then fail with
    /// ``ReadLimitError/Code/busy``.
    package var maxConcurrent = ReadLimits.defaultConcurrency
    /// How long a read waits for a slot (`query.queue_wait_seconds`, default 2 s).
    package var queueWait: Duration = .seconds(2)

    package init() {}

    /// Twice the active cores, at least 4.
    package static var defaultConcurrency: Int {
        max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }

    /// A duration for messages: "10 s", "0.5 s".
    package static func text(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value == value.rounded() ? "\(Int64(value)) s" : "\(value) s"
    }
}

/// A read refused or cut short by its ``ReadLimits``. The HTTP edge answers ``Code/tooLarge`` 422
/// and the others 503 with `Retry-After`.
package struct ReadLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable, Equatable {
        /// The read would materialise more than ``ReadLimits/maxSourceRows`` rows.
        case tooLarge = "query_too_large"
        /// The read ran past ``ReadLimits/timeout``.
        case timeout = "query_timeout"
        /// ``ReadLimits/maxConcurrent`` reads were running for all of ``ReadLimits/queueWait``.
        case busy = "too_many_reads"
    }

    package var code: Code
    /// A client-safe message saying what to do.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }
}

/// What one read may still spend: its deadline and its source rows. The store's readers count
/// rows into it as they read them and consult its deadline (from reader threads: thread-safe).
/// ``AnalysisRunner`` binds it to ``current`` for the read.
package final class ReadBudget: Sendable {
    /// The budget of the read the current task runs, if it is bounded.
    @TaskLocal package static var current: ReadBudget?

    package let maxRows: Int
    package let timeout: Duration
    package let deadline: ContinuousClock.Instant
    private let used = Atomic<Int>(0)
    private let failure = Mutex<ReadLimitError?>(nil)

    package init(maxRows: Int, timeout: Duration, now: ContinuousClock.Instant = .now) {
        self.maxRows = maxRows
        self.timeout = timeout
        self.deadline = now.advanced(by: timeout)
    }

    /// Counts `rows` more rows; past ``maxRows`` records and throws ``ReadLimitError/Code/tooLarge``.
    package func take(_ rows: Int = 1) throws(ReadLimitError) {
        guard rows > 0 else { return }
        let total = used.add(rows, ordering: .relaxed).newValue
        guard total > maxRows else { return }
        throw fail(
            ReadLimitError(
                .tooLarge,
                "the query would read more than \(maxRows) rows (query.max_source_rows); "
                    + "narrow the window (from, to), filter (version, os, device) or group by fewer dimensions"))
    }

    /// Rows counted so far.
    package var rowsRead: Int { used.load(ordering: .relaxed) }

    /// Whether the deadline has passed.
    package var isExpired: Bool { ContinuousClock.now >= deadline }

    /// Time left before the deadline (zero once past it).
    package var remaining: Duration { max(.zero, deadline - ContinuousClock.now) }

    /// Throws (and records) ``ReadLimitError/Code/timeout`` once the deadline has passed.
    package func checkDeadline() throws(ReadLimitError) {
        guard isExpired else { return }
        throw expired()
    }

    /// Records and returns the timeout error.
    @discardableResult
    package func expired() -> ReadLimitError {
        fail(
            ReadLimitError(
                .timeout,
                "the query ran past its time budget of \(ReadLimits.text(timeout)) (query.timeout_seconds); "
                    + "retry later or narrow the window, filters or group_by"))
    }

    /// The first limit this read ran into, if any: a store that caught its own error (an interrupted
    /// statement) answers this instead.
    package var exceeded: ReadLimitError? { failure.withLock { $0 } }

    private func fail(_ error: ReadLimitError) -> ReadLimitError {
        failure.withLock { current in
            if current == nil { current = error }
            return current ?? error
        }
    }
}

/// The slots of ``ReadLimits/maxConcurrent``: a read takes one before it runs and gives it back
/// after; when none is free it waits, first come first served, at most its wait.
package final class ReadGate: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var running = 0
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    package let limit: Int
    private let state = Mutex(State())

    package init(limit: Int) { self.limit = max(1, limit) }

    /// Reads holding a slot now.
    package var running: Int { state.withLock { $0.running } }

    /// Takes a slot, waiting at most `wait` for one; false when none came in time.
    package func acquire(waitingAtMost wait: Duration) async -> Bool {
        let id = state.withLock { state -> UInt64? in
            if state.running < limit {
                state.running += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        guard wait > .zero else { return false }
        return await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.running < limit {
                    state.running += 1
                    return true
                }
                state.waiters.append(Waiter(id: id, continuation: continuation))
                return false
            }
            if granted {
                continuation.resume(returning: true)
                return
            }
            // Bounded by `wait`; a waiter granted earlier makes it a no-op.
            Task { [weak self] in
                try? await Task.sleep(for: wait)
                self?.expire(id)
            }
        }
    }

    /// Gives a slot back: to the longest waiting read, or free.
    package func release() {
        let next = state.withLock { state -> Waiter? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.running -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}

/// Whether a read waits for the aggregator to fold every document acknowledged before it (the
/// default: answers are exact). `/metrics` reads the figures folded so far instead: a scrape must
/// not wait for a backlog, and the lag gauges beside them say how far behind they are.
package enum ReadFreshness {
    @TaskLocal package static var waitsForFold = true
    /// Whether the read may read the explorer's rows (true unless said otherwise). A SQLite
    /// server's writer holds the explorer's rows in memory for seconds and writes them when a
    /// reader waits; a read that says it reads none waits for the rollups alone, and an
    /// explorer read in it fails instead of answering from rows not written yet.
    @TaskLocal package static var readsExplorer = true
}
