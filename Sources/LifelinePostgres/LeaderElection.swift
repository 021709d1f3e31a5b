import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One leader among the nodes sharing a PostgreSQL database, for the singletons (alert
/// evaluation and delivery, retention): the node holding the session advisory lock
/// ``PostgresStore/leaderLock`` on its own connection (not the pool's). The lock goes with the
/// connection: when the leader dies its connection closes and another node takes the lock on its
/// next attempt (every `retry`), so takeover is bounded by `retry` plus the time the server takes
/// to notice the dead connection (immediate for a killed process: the kernel closes the socket).
package final class LeaderElection: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let retry: Duration
    private let state = Mutex<Bool>(false)

    /// Whether this node holds the lock now.
    package var isLeader: Bool { state.withLock { $0 } }

    package init(location: PostgresLocation, retry: Duration = .seconds(1), logger: Logger) throws(PostgresStoreError) {
        self.configuration = try location.connectionConfiguration()
        self.retry = retry
        self.logger = logger
    }

    /// Campaigns until cancelled: connects, tries the lock every `retry`, and once held checks the
    /// connection every `retry` (losing it, or an error, makes this node a follower again).
    /// `onChange` is told each change of leadership.
    package func run(onChange: @escaping @Sendable (Bool) -> Void = { _ in }) async {
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 0, logger: logger)
                defer { Task { try? await connection.close() } }
                while !Task.isCancelled {
                    var held = false
                    for try await value in try await connection.query(
                        "SELECT pg_try_advisory_lock(\(PostgresStore.leaderLock))", logger: logger
                    ).decode(Bool.self) {
                        held = value
                    }
                    if held { set(true, onChange) }
                    // Holding it: stay while the connection answers.
                    while held && !Task.isCancelled {
                        try await Task.sleep(for: retry)
                        try await connection.query("SELECT 1", logger: logger)
                    }
                    try await Task.sleep(for: retry)
                }
                set(false, onChange)
                _ = try? await connection.query("SELECT pg_advisory_unlock_all()", logger: logger)
            } catch {
                set(false, onChange)
                if Task.isCancelled { return }
                logger.warning("leader election: \(error)")
                try? await Task.sleep(for: retry)
            }
        }
        set(false, onChange)
    }

    private func set(_ leader: Bool, _ onChange: @Sendable (Bool) -> Void) {
        let changed = state.withLock { current in
            defer { current = leader }
            return current != leader
        }
        if changed {
            logger.info(leader ? "this node is the leader" : "this node is a follower")
            onChange(leader)
        }
    }
}
