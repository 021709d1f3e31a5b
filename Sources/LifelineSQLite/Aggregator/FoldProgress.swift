import Foundation
import LifelineStorage
import LifelineModel
import Synchronization

/// How far the aggregator has folded what the door acknowledged, shared by the writer thread
/// (which appends and folds) and the readers (which wait for the fold to reach what was
/// acknowledged before they read: an answer never lags an acknowledgement).
///
/// Payload ids grow in commit order on SQLite (one writer connection), so "folded through id N"
/// is exact: every document with an id ≤ N is in the rollups, none above. The explorer's rows
/// and the rollups of both levels have watermarks of their own, at most the fold's
/// (``ExplorerStage`` and ``RollupStage`` hold them across folds): a reader waits for the rollups,
/// and for the explorer's rows too when it reads them (``ReadFreshness/readsExplorer``), and its
/// wait makes the writer write what it needs of what is held. A query that reads no explorer row
/// does not make the writer merge the explorer's held rows (up to 2 s of version rows: an exits
/// query beside the reference load waited 0.28 s at the median for them, 0.08 s without;
/// BENCHMARKS.md, "Rollup reads without the explorer's held rows").
package final class FoldProgress: Sendable {
    private struct Waiter {
        var id: UInt64
        var through: Int64
        /// It reads the explorer's rows (it waits for them too).
        var explorer: Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// Highest payload id committed (by this process's door, or found at start).
        var acknowledged: Int64 = 0
        /// Watermark: every payload id ≤ this is folded.
        var folded: Int64 = 0
        /// Every payload id ≤ this is in both rollup levels' stored rows (≤ `folded`).
        var rollups: Int64 = 0
        /// Every payload id ≤ this is in the explorer's stored rows (≤ `folded`).
        var explorer: Int64 = 0
        /// Folded documents whose explorer rows the writer holds in memory.
        var explorerHeld = 0
        /// What a reader sees whole: the fold's and the rollups' watermarks, and the explorer's
        /// when it reads the explorer's rows.
        func readable(explorer reads: Bool) -> Int64 { reads ? min(folded, rollups, explorer) : min(folded, rollups) }
        /// Documents acknowledged and not folded yet (this process's count; the start's backlog included).
        var pendingDocuments = 0
        /// (highest id of a committed door batch, when it committed, epoch ms), oldest first, for the lag in seconds.
        var marks: [(through: Int64, at: Int64)] = []
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        /// A reader waits: fold before the next door batch (and write the explorer's held rows
        /// when one of them reads those: `requestedExplorer`).
        var requested = false
        var requestedExplorer = false
        /// Wakes the writer thread (nil while no writer runs in this process).
        var wake: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    package init() {}

    /// A writer thread started: it folds from `folded` (the explorer's rows and the rollups from
    /// `explorer`, the lowest of their watermarks); `acknowledged` is the highest stored id.
    func attach(
        acknowledged: Int64, folded: Int64, explorer: Int64, pending: Int, wake: @escaping @Sendable () -> Void
    ) {
        state.withLock { state in
            state.acknowledged = acknowledged
            state.folded = folded
            state.explorer = min(explorer, folded)
            state.rollups = state.explorer
            state.pendingDocuments = pending
            state.marks = acknowledged > folded ? [(acknowledged, WallClock.nowMilliseconds())] : []
            state.wake = wake
        }
    }

    /// The writer thread stopped: readers no longer wait for a fold (an offline reader folds first).
    func detach() {
        let waiters = state.withLock { state in
            state.wake = nil
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }

    /// A door batch committed `count` new documents, the highest with id `through`.
    func acknowledged(through: Int64, count: Int) {
        guard count > 0 else { return }
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, through)
            state.pendingDocuments += count
            state.marks.append((through, WallClock.nowMilliseconds()))
        }
    }

    /// A fold committed: every id ≤ `through` is folded, `count` documents of them in this fold;
    /// `caughtUp`: no document above it was left (everything acknowledged so far is folded);
    /// `explorerHeld`: folded documents whose explorer rows are held in memory, `rollupsHeld`: whose
    /// rollups are (0 and 0: the stored rows hold every folded document).
    func folded(through: Int64, count: Int, caughtUp: Bool, explorerHeld: Int, rollupsHeld: Int) {
        let ready: [Waiter] = state.withLock { state in
            state.folded = max(state.folded, caughtUp ? max(through, state.acknowledged) : through)
            state.explorerHeld = explorerHeld
            if explorerHeld == 0 { state.explorer = state.folded }
            if rollupsHeld == 0 { state.rollups = state.folded }
            state.pendingDocuments = max(0, state.pendingDocuments - count)
            if state.folded >= state.acknowledged { state.pendingDocuments = 0 }
            state.marks.removeAll { $0.through <= state.folded }
            let readable = (rollups: state.readable(explorer: false), all: state.readable(explorer: true))
            let isReady = { (waiter: Waiter) in waiter.through <= (waiter.explorer ? readable.all : readable.rollups) }
            let ready = state.waiters.filter(isReady)
            state.waiters.removeAll(where: isReady)
            state.requested = !state.waiters.isEmpty
            state.requestedExplorer = state.waiters.contains { $0.explorer }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Whether acknowledged documents wait for the fold.
    var hasBacklog: Bool { state.withLock { $0.folded < $0.acknowledged } }

    /// Whether folded documents are not in the explorer's or the rollups' stored rows yet.
    var explorerBehind: Bool { state.withLock { min($0.explorer, $0.rollups) < $0.folded } }

    /// Whether a reader waits (the next fold writes the rollups' held cells), and whether one
    /// of them reads the explorer's rows (it writes the explorer's held rows too).
    var readerWaits: (any: Bool, explorer: Bool) { state.withLock { ($0.requested, $0.requestedExplorer) } }

    /// Whether the writer should fold before its next door batch: documents wait and a reader
    /// waits for them (or for the explorer's held rows), or `batch` of them wait, or the oldest is
    /// `delay` seconds old.
    func foldDue(batch: Int, delay: Double) -> Bool {
        state.withLock { state in
            if state.requested, state.readable(explorer: state.requestedExplorer) < state.acknowledged { return true }
            guard state.folded < state.acknowledged else { return false }
            if state.pendingDocuments >= batch { return true }
            guard let oldest = state.marks.first?.at else { return false }
            return Double(WallClock.nowMilliseconds() - oldest) / 1_000 >= delay
        }
    }

    /// The watermark.
    package var foldedThrough: Int64 { state.withLock { $0.folded } }

    /// The lowest of the explorer's and the rollups' watermarks (≤ ``foldedThrough``).
    package var explorerThrough: Int64 { state.withLock { min($0.explorer, $0.rollups) } }

    /// Documents acknowledged and not yet folded.
    package var lagDocuments: Int { state.withLock { $0.pendingDocuments } }

    /// Folded documents whose explorer rows the writer holds in memory.
    package var explorerHeldDocuments: Int { state.withLock { $0.explorerHeld } }

    /// Age of the oldest acknowledged document not yet folded, seconds (0 when caught up).
    package var lagSeconds: Double {
        let oldest = state.withLock { $0.marks.first?.at }
        guard let oldest else { return 0 }
        return max(0, Double(WallClock.nowMilliseconds() - oldest) / 1_000)
    }

    /// Returns once everything acknowledged when it was called is folded (at once when no writer
    /// runs in this process), in the rollups' stored rows and, when `explorer`, in the explorer's.
    /// Throws ``StoreError/Code/unavailable`` after `timeout` seconds.
    package func waitForFold(timeout: Double, explorer: Bool = true) async throws(StoreError) {
        let registration: (id: UInt64, wake: (@Sendable () -> Void)?)? = state.withLock { state in
            guard state.wake != nil, state.readable(explorer: explorer) < state.acknowledged else { return nil }
            state.nextWaiter &+= 1
            state.requested = true
            if explorer { state.requestedExplorer = true }
            return (state.nextWaiter, state.wake)
        }
        guard let registration else { return }
        let caughtUp = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                guard state.wake != nil, state.readable(explorer: explorer) < state.acknowledged else { return true }
                state.waiters.append(
                    Waiter(
                        id: registration.id, through: state.acknowledged, explorer: explorer,
                        continuation: continuation))
                // Asked again: a fold between the registration and this may have cleared it.
                state.requested = true
                if explorer { state.requestedExplorer = true }
                return false
            }
            if resumeNow {
                continuation.resume(returning: true)
                return
            }
            registration.wake?()
            let id = registration.id
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(Int64(max(0.001, timeout) * 1_000)))
                self?.expire(id)
            }
        }
        guard caughtUp else {
            throw StoreError(
                .unavailable, "the aggregator is behind",
                cause: "the fold did not reach the acknowledged documents within \(timeout) s")
        }
    }

    private func expire(_ id: UInt64) {
        let expired = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            state.requestedExplorer = state.waiters.contains { $0.explorer }
            return waiter
        }
        expired?.continuation.resume(returning: false)
    }
}
