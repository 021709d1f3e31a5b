import Foundation
import LifelineModel
import LifelineStorage
import PostgresNIO

/// The aggregator's lag, the answers' barrier and the leader's fold loop.
extension PostgresStore {
    /// Documents appended and not folded, and the age of the oldest (seconds); also kept for
    /// ``writerStatistics``.
    @discardableResult
    package func refreshAggregationLag() async throws -> (documents: Int, seconds: Double) {
        try await waitForPool()
        var lag = (documents: 0, seconds: 0.0)
        for try await (count, oldest) in try await client.query(
            """
            SELECT count(*), COALESCE(min(p.received_at_ms), 0) FROM payloads p
            WHERE \(unescaped: Self.pendingCondition)
            """, logger: logger
        ).decode((Int64, Int64).self) {
            let age = count > 0 ? Double(max(0, WallClock.nowMilliseconds() - oldest)) / 1_000 : 0
            lag = (Int(count), age)
        }
        aggregation.withLock { counters in
            counters.lagDocuments = lag.documents
            counters.lagSeconds = lag.seconds
        }
        return lag
    }

    /// Whether documents wait for the fold: the idle leader's poll, every 10 ms. Bounded above by
    /// the snapshot's xmax (no visible document is at or past it) so the range on `payloads_xact`
    /// has two ends: with the lower one alone the planner costs an EXISTS by its first row and
    /// chose a sequential scan of every payload (22 ms at 200,000, two thirds of a core on the
    /// PostgreSQL server while the leader idled; BENCHMARKS.md, "The idle leader's poll").
    package static let pendingExists = """
        SELECT EXISTS (SELECT 1 FROM payloads p
            WHERE p.xact < pg_snapshot_xmax(pg_current_snapshot())::text::bigint AND \(pendingCondition))
        """

    /// Whether documents are waiting for the fold (a read-only statement: no transaction id).
    func hasPendingDocuments() async throws -> Bool {
        var pending = false
        for try await value in try await client.query(
            PostgresQuery(unsafeSQL: Self.pendingExists), logger: logger
        ).decode(Bool.self) {
            pending = value
        }
        return pending
    }

    /// The first statement of a read's transaction: the bound every document acknowledged before
    /// the read is below (`target`, or this snapshot's xmax on the first attempt), and whether
    /// this snapshot holds a document below it that is not folded yet.
    static func foldBarrier(target: Int64?, on connection: PostgresConnection, logger: Logger) async throws -> (
        target: Int64, pending: Bool
    ) {
        for try await (bound, pending) in try await connection.query(
            """
            WITH t AS (SELECT COALESCE(\(target), pg_snapshot_xmax(pg_current_snapshot())::text::bigint) AS bound)
            SELECT t.bound, EXISTS (SELECT 1 FROM payloads p WHERE p.xact < t.bound AND \(unescaped: pendingCondition))
            FROM t
            """, logger: logger
        ).decode((Int64, Bool).self) {
            return (bound, pending)
        }
        throw PostgresStoreError("the fold barrier returned no row")
    }

    /// Documents a fold batch takes, and the leader's batch while documents wait behind the last
    /// one: 4,096 drained a backlog 1.3–1.5× faster than 1,024 (BENCHMARKS.md, "PostgreSQL's
    /// leader folds larger batches when behind").
    static let defaultBatch = 1_024
    static let backlogBatch = 4_096

    /// Runs the fold while this node leads (``isLeader``), until cancelled; every node refreshes
    /// its view of the lag each second, or less often while counting it takes long (a backlog of
    /// a million documents took ~1 s of three processes' CPU to count: at most a tenth of the time
    /// goes to counting). A batch follows a batch while documents wait; idle, it looks every 10 ms
    /// with a read-only statement (no transaction id, no WAL).
    package func runAggregator(isLeader: @escaping @Sendable () -> Bool) async {
        let clock = ContinuousClock()
        var lastLag = clock.now - .seconds(10)
        var lagInterval = Duration.seconds(1)
        var more = false
        while !Task.isCancelled {
            // Behind the door (the last batch left documents), batches of ``backlogBatch``: fewer
            // statements and commits per document (a reader's own fold keeps the default batch).
            let limit = more ? Self.backlogBatch : Self.defaultBatch
            more = false
            let leader = isLeader()
            retained.withLock { retained in
                if leader { retained.enabled = true } else if retained.enabled { retained.disable() }
            }
            do {
                if leader, try await hasPendingDocuments() {
                    let result = try await foldOnce(limit: limit)
                    more = result.more
                }
                if clock.now - lastLag >= lagInterval {
                    lastLag = clock.now
                    try await refreshAggregationLag()
                    lagInterval = max(.seconds(1), (clock.now - lastLag) * 10)
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("aggregator: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
            if !more { try? await Task.sleep(for: .milliseconds(10)) }
        }
    }
}
