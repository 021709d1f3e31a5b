import Dispatch
import Foundation
import LifelineStorage
import Logging
import Synchronization

/// Copies committed WAL frames into the database file on its own thread and connection
/// (`PRAGMA wal_checkpoint(PASSIVE)`), so the writer's COMMIT does not pay for checkpoints.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses the threshold, on the
/// writer's thread: every ~1,000 WAL pages one ingest batch waited for a checkpoint. Here the
/// writer only signals after its commits; a passive checkpoint never blocks the writer or the
/// readers, and the writer keeps a high automatic threshold as a safety net in case this thread
/// falls behind.
///
/// **The WAL's cap.** A passive checkpoint copies frames but never restarts the log, and SQLite
/// restarts it only when a writer begins while no reader uses it: with the explorer's reads and
/// the fold's long transactions beside a continuous door, that moment rarely came and the log
/// grew past the safety threshold (to 186–256 MB over 35 s of the reference load). Once the log
/// holds `capPages` frames, this thread makes it restart (`wal_checkpoint(RESTART)`), waiting at
/// most its connection's short busy timeout for readers and the writer (the writer waits on it
/// meanwhile); when that does not suffice it tries again after the next commits. The writer's
/// next transaction then writes its frames from the log's start again, over the old ones, and the
/// file keeps its length (cut back to the cap if it was past it: the writer's
/// `journal_size_limit`). Truncating the log to nothing instead, as this thread did before, made
/// every frame until the next cap grow the file again, and every door's sync pay for that: the
/// reference load ingested 1.07× more with the restart, at a lower p99 (BENCHMARKS.md, "The WAL
/// restarted, not truncated").
final class Checkpointer: Sendable {
    /// Commits between two checkpoints (or a second, whichever comes first). A checkpoint copies
    /// each page the commits since the last one dirtied once: every 8 commits, a door's index
    /// pages (each insert a page at random) went back to the database nearly as often as to the
    /// WAL; every 64 writes 13 % fewer bytes per reference payload (BENCHMARKS.md).
    let interval: Int
    /// WAL frames past which the log is truncated.
    let capPages: Int
    private let state = Mutex((commits: 0, stopping: false))
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(connection: Connection, interval: Int = 64, capPages: Int, logger: Logger) {
        self.interval = max(1, interval)
        self.capPages = max(1, capPages)
        let owned = OwnedConnection(connection: connection)
        let thread = Thread { [self] in
            self.loop(owned.connection, logger: logger)
        }
        thread.name = "lifeline-checkpointer"
        thread.start()
    }

    /// The writer committed a transaction.
    func committed() {
        let due = state.withLock { state in
            state.commits += 1
            guard state.commits >= interval else { return false }
            state.commits = 0
            return true
        }
        if due { wakeup.signal() }
    }

    /// Runs a last checkpoint, closes the connection and returns when the thread has ended.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wakeup.signal()
        finished.wait()
    }

    private func loop(_ connection: Connection, logger: Logger) {
        while true {
            _ = wakeup.wait(timeout: .now() + .seconds(1))
            let stopping = state.withLock { $0.stopping }
            do throws(StoreError) {
                // (busy, frames in the log, frames copied)
                let frames = try connection.first("PRAGMA wal_checkpoint(PASSIVE)", []) { $0.int64(1) } ?? 0
                if frames >= Int64(capPages) {
                    _ = try? connection.query("PRAGMA wal_checkpoint(RESTART)") { $0.int64(0) }
                }
            } catch {
                logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"])
            }
            if stopping { break }
        }
        connection.close()
        finished.signal()
    }
}

/// Hands a connection to the thread that will be its only user.
private final class OwnedConnection: @unchecked Sendable {
    let connection: Connection
    init(connection: Connection) { self.connection = connection }
}
