import Foundation
import LifelineAnalysis
import LifelineModel
import LifelineStorage
import Logging
import NIOCore
import PostgresNIO

/// The aggregate queries on PostgreSQL: ``AggregateReader`` on postgres-nio's async API, over one
/// pooled connection inside one `REPEATABLE READ READ ONLY` transaction (one snapshot). No thread
/// waits on a query; only the symbolizer's process I/O runs on NIO's blocking pool.
extension PostgresStore: AggregateSource {
    package func read<T: Sendable>(
        _ body: @escaping @Sendable (any AggregateReader) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        let symbols = symbolicator.map { (cache: symbolCache, symbolicator: $0) }
        let client = self.client
        // A bounded read (``ReadBudget``) is cut by its own statement timeout first; the client
        // deadline stays the backstop for a database that does not answer at all.
        let budget = ReadBudget.current
        let limit = budget.map { max(timeout, $0.remaining + .seconds(1)) } ?? timeout
        do {
            return try await withDeadline(limit, "read") {
                try await self.waitForPool()
                // The answer is exact: its snapshot must hold every document acknowledged before
                // the read folded. While the fold is behind, the read waits for it (and after
                // `helpAfter` folds itself, under the same lock: a leader being replaced does not
                // hold the answers).
                let clock = ContinuousClock()
                let start = clock.now
                var target: Int64?
                let waits = ReadFreshness.waitsForFold
                while true {
                    let outcome: ReadAttempt<T> = try await client.withConnection { connection in
                        try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                        do {
                            if let budget {
                                // The read's time left bounds each of its statements (server side: 57014).
                                let left = budget.remaining.components
                                let milliseconds = max(
                                    1, left.seconds * 1_000 + left.attoseconds / 1_000_000_000_000_000)
                                try await connection.query(
                                    PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = \(milliseconds)"),
                                    logger: logger)
                            }
                            let barrier =
                                waits
                                ? try await Self.foldBarrier(target: target, on: connection, logger: logger)
                                : (target: 0, pending: false)
                            if barrier.pending && waits {
                                try await connection.query("ROLLBACK", logger: logger)
                                return .behind(barrier.target)
                            }
                            let result = try await body(
                                PostgresReader(connection: connection, logger: logger, symbols: symbols))
                            try await connection.query("COMMIT", logger: logger)
                            return .done(result)
                        } catch {
                            _ = try? await connection.query("ROLLBACK", logger: logger)
                            throw error
                        }
                    }
                    switch outcome {
                    case .done(let result): return result
                    case .behind(let bound):
                        target = bound
                        if clock.now - start >= Self.helpAfter {
                            _ = try await self.foldOnce()
                        } else {
                            try await Task.sleep(for: .milliseconds(2))
                        }
                    }
                }
            }
        } catch {
            // Rows refused by the read's budget; whatever failed once its deadline had passed (57014,
            // the client deadline) is the timeout.
            if let exceeded = budget?.exceeded { throw exceeded }
            if let budget, budget.isExpired { throw budget.expired() }
            throw Self.readError(error, logger: logger)
        }
    }
}

/// One attempt of a read: its answer, or the fold was behind what was acknowledged before it.
private enum ReadAttempt<T: Sendable>: Sendable {
    case done(T)
    case behind(Int64)
}

extension PostgresStore {
    /// How long a read waits for the leader's fold before folding itself.
    static let helpAfter: Duration = .milliseconds(100)

    /// A read's failure as the server answers it: the database unreachable, restarting, out of
    /// connections, or past the time bound is ``StoreError/Code/unavailable`` (503); a wrong query
    /// stays what it is (500).
    static func readError(_ error: any Error, logger: Logger) -> any Error {
        // What the read's own body threw (an unknown app, a bad parameter) passes unchanged.
        guard let psql = error as? PSQLError else { return error }
        if let server = serverError(psql), !isUnavailable(server) { return error }
        logger.warning(
            "postgres read failed: database unavailable", metadata: ["error": "\(String(reflecting: error))"])
        return StoreError(.unavailable, "the database is unavailable", cause: "\(error)")
    }
}
