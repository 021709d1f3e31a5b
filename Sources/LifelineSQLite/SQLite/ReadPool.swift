import LifelineStorage
import Synchronization

/// A few read-only connections (`PRAGMA query_only`) to the database file, opened on first use,
/// so aggregate reads run side by side and beside the writer (WAL readers do not block).
///
/// A read leases a connection for its whole transaction (``lease()``, ``giveBack(_:)``); when all
/// are leased, the next read waits without holding a thread.
final class ReadPool: Sendable {
    /// A leased connection. Unchecked: a lease belongs to one read at a time, which uses it
    /// serially, each use on a reader thread (``StoreThreads/reads``); the pool's mutex hands it
    /// from one read to the next.
    final class Lease: @unchecked Sendable {
        let connection: Connection

        init(_ connection: Connection) { self.connection = connection }
    }

    private struct State: ~Copyable {
        var idle: [Lease] = []
        var opened = 0
        var waiting: [CheckedContinuation<Lease, Never>] = []
    }

    private let state = Mutex(State())
    private let path: String
    private let options: Database.Options
    let size: Int

    /// Connections (and reader threads, ``StoreThreads/reads``) per database.
    static let defaultSize = 4

    init(path: String, options: Database.Options, size: Int = ReadPool.defaultSize) {
        self.path = path
        self.options = options
        self.size = max(1, size)
    }

    /// An idle connection, a new one (opened on a reader thread) while fewer than ``size`` are
    /// open, or the next one given back.
    func lease() async throws -> Lease {
        enum Next {
            case ready(Lease)
            case open
            case wait
        }
        let next = state.withLock { state -> Next in
            if let lease = state.idle.popLast() { return .ready(lease) }
            if state.opened < size {
                state.opened += 1
                return .open
            }
            return .wait
        }
        switch next {
        case .ready(let lease):
            return lease
        case .open:
            let path = self.path
            let options = self.options
            do {
                return try await StoreThreads.reads.runIfActive {
                    let connection = try Connection(path: path, options: options)
                    try connection.execute("PRAGMA query_only = 1")
                    return Lease(connection)
                }
            } catch {
                state.withLock { $0.opened -= 1 }
                throw error
            }
        case .wait:
            return await withCheckedContinuation { continuation in
                state.withLock { state in
                    if let lease = state.idle.popLast() {
                        continuation.resume(returning: lease)
                    } else {
                        state.waiting.append(continuation)
                    }
                }
            }
        }
    }

    /// Returns `lease` to the pool (or straight to a waiting read).
    func giveBack(_ lease: Lease) {
        let waiter = state.withLock { state -> CheckedContinuation<Lease, Never>? in
            if !state.waiting.isEmpty { return state.waiting.removeFirst() }
            state.idle.append(lease)
            return nil
        }
        waiter?.resume(returning: lease)
    }
}
