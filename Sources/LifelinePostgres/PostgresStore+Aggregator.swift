import Foundation
import LifelineIngest
import LifelineModel
import LifelineStorage
import PostgresNIO
import Synchronization

/// What one fold did.
package struct PostgresFoldResult: Sendable, Equatable {
    /// Documents folded (counted in the figures, or skipped as unreadable).
    package var folded = 0
    /// Of those, documents whose raw copy could not be decoded again: kept raw, counted nowhere.
    package var skipped = 0
    /// Whether folded documents remain beyond this fold's batch.
    package var more = false
    /// Another process held the fold (its lock): this one did nothing.
    package var busy = false
}

/// The aggregator's counters and lag, as this node last saw them (``PostgresStore/writerStatistics``).
struct AggregationCounters {
    var folds = 0
    var foldedDocuments = 0
    var skipped = 0
    var lagDocuments = 0
    var lagSeconds: Double = 0
}

/// The aggregator stage on PostgreSQL: nodes only append (``DocumentWriter``); the leader folds
/// committed documents into the rollups, crash groups, diagnostics and per-state rows, in
/// batches, one fold at a time (the row of `aggregation_state` is locked by the fold's
/// transaction: one writer of rollup rows, no hot rows between nodes).
///
/// Progress is a watermark over the inserting transactions' ids (`payloads.xact`), not the
/// documents' ids, which commit out of order across nodes: the fold reads its snapshot's xmin,
/// below which every transaction has finished, and never moves the watermark past it, so a
/// document whose transaction is still open is never passed over. Documents committed above the
/// watermark are folded at once and listed in `folded_ahead` until the watermark passes them. The
/// watermark, that list and the figures change in one transaction: a fold that does not commit
/// leaves everything as it was; one that commits never sees its documents again.
extension PostgresStore {
    /// The documents appended and not folded (any transaction, as this statement's snapshot sees).
    /// The watermark is a scalar subquery (an init plan), so the range on `payloads_xact` is an
    /// index scan: joined as a table, the planner scanned every payload (~100 ms at 200,000). An
    /// EXISTS over it needs an upper bound as well (``pendingExists``).
    package static let pendingCondition = """
        p.xact >= (SELECT folded_xact FROM aggregation_state WHERE id = 1)
            AND NOT EXISTS (SELECT 1 FROM folded_ahead f WHERE f.payload = p.id)
        """

    /// Folds up to `limit` documents in one transaction, `part` documents at a time
    /// (``fold(part:careful:into:result:on:)``). When another process holds the fold (the leader,
    /// a refold) it returns at once with ``PostgresFoldResult/busy``.
    package func foldOnce(limit: Int = defaultBatch, part: Int = foldPart) async throws -> PostgresFoldResult {
        try await waitForPool()
        var attempt = 0
        var careful = false
        while true {
            attempt += 1
            do {
                let result = try await client.withConnection { connection in
                    try await self.foldTransaction(
                        limit: max(1, limit), part: max(1, part), careful: careful, on: connection)
                }
                aggregation.withLock { counters in
                    counters.folds += result.folded > 0 ? 1 : 0
                    counters.foldedDocuments += result.folded
                    counters.skipped += result.skipped
                }
                return result
            } catch {
                guard let server = Self.serverError(error) else { throw error }
                let state = server.serverInfo?[.sqlState]
                // 55P03: NOWAIT found the fold's lock taken.
                if state == "55P03" { return PostgresFoldResult(busy: true) }
                if Self.isRetryable(server), attempt < 5 { continue }
                if Self.isUnavailable(server) || careful || attempt >= 5 { throw error }
                // A document whose rows fail: once more, each diagnostic document on its own
                // savepoint, so the failing one is skipped instead of holding the fold.
                logger.warning("fold failed; folding again document by document", metadata: ["error": "\(error)"])
                careful = true
            }
        }
    }

    private func foldTransaction(limit: Int, part: Int, careful: Bool, on connection: PostgresConnection) async throws
        -> PostgresFoldResult
    {
        let logger = self.logger
        try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
        do {
            let result = try await fold(limit: limit, part: part, careful: careful, on: connection)
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    struct Candidate {
        var id: Int64
        var app: Int64
        var bundle: String
        var kind: String
        var received: Int64
        var day: String
        var xact: Int64
    }

    /// The fold inside its transaction (REPEATABLE READ: the watermark row, the snapshot's xmin and
    /// the candidates are of one snapshot).
    private func fold(limit: Int, part size: Int, careful: Bool, on connection: PostgresConnection) async throws
        -> PostgresFoldResult
    {
        let logger = self.logger
        var watermark: Int64 = 0
        var xmin: Int64 = 0
        for try await (folded, snapshotXmin) in try await connection.query(
            """
            SELECT folded_xact, pg_snapshot_xmin(pg_current_snapshot())::text::bigint
            FROM aggregation_state WHERE id = 1 FOR UPDATE NOWAIT
            """, logger: logger
        ).decode((Int64, Int64).self) {
            (watermark, xmin) = (folded, snapshotXmin)
        }
        let fetch = Int64(limit) + 1
        var candidates: [Candidate] = []
        for try await (id, app, bundle, kind, received, day, xact) in try await connection.query(
            """
            SELECT p.id, p.app, a.bundle_id, p.kind, p.received_at_ms, p.day::text, p.xact
            FROM payloads p JOIN apps a ON a.id = p.app
            WHERE p.xact >= \(watermark)
                AND NOT EXISTS (SELECT 1 FROM folded_ahead f WHERE f.payload = p.id)
            ORDER BY p.xact, p.id LIMIT \(fetch)
            """, logger: logger
        ).decode((Int64, Int64, String, String, Int64, String, Int64).self) {
            candidates.append(
                Candidate(id: id, app: app, bundle: bundle, kind: kind, received: received, day: day, xact: xact))
        }
        var result = PostgresFoldResult()
        result.more = candidates.count > limit
        // Every transaction below `xmin` has finished; past the batch, the next transaction's
        // documents wait for the next fold.
        var next = max(watermark, xmin)
        if result.more { next = max(watermark, min(next, candidates[limit].xact)) }
        let batch = Array(candidates.prefix(limit))
        guard !batch.isEmpty || next != watermark else { return result }

        // The batch in parts: each part's documents are decoded (or taken from those retained),
        // added and their fine rows written before the next part's; the coarser rows are summed
        // across the parts and written once. A 4,096-document batch held at once was ~200 MB of
        // the leader's heap (BENCHMARKS.md, "The leader's fold in parts").
        var fold = BatchFold()
        for start in stride(from: 0, to: batch.count, by: size) {
            let part = Array(batch[start..<min(batch.count, start + size)])
            try await self.fold(part: part, careful: careful, into: &fold, result: &result, on: connection)
        }
        for (app, rows) in fold.coarse.sorted(by: { $0.key < $1.key }) {
            try await rows.flush(app: app, on: connection, logger: logger)
        }
        try await Self.flushVersionLevel(fold.explorer, on: connection, logger: logger)
        try await fold.states.flush(on: connection, logger: logger)
        let ahead = batch.filter { $0.xact >= next }
        if !ahead.isEmpty {
            let (ids, xacts) = (ahead.map(\.id), ahead.map(\.xact))
            try await connection.query(
                """
                INSERT INTO folded_ahead (payload, xact)
                SELECT * FROM unnest(\(ids)::bigint[], \(xacts)::bigint[])
                """, logger: logger)
        }
        if next != watermark {
            try await connection.query("DELETE FROM folded_ahead WHERE xact < \(next)", logger: logger)
        }
        let (now, count) = (WallClock.nowMilliseconds(), Int64(result.folded))
        try await connection.query(
            """
            UPDATE aggregation_state SET folded_xact = \(next), folded_at_ms = \(now),
                folded_documents = folded_documents + \(count)
            WHERE id = 1
            """, logger: logger)
        return result
    }

    /// The explorer's part of a fold (``ExplorerRows``): the cells of the metric documents among
    /// `items` (with their app), added per app in order to the rows `carry` holds, their fine rows
    /// merged into the stored ones; the version-level rows stay in `carry`, for
    /// ``flushVersionLevel(_:on:logger:)``.
    static func foldExplorer(
        _ items: [(app: Int64, item: IngestItem)], into carry: ExplorerCarry, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        var rows = carry.take()
        // Put back even when a statement fails: the batch's transaction then rolls back anyway.
        defer { carry.put(rows) }
        for (index, (app, item)) in items.enumerated() {
            guard case .metric(let metric) = item.document.content else { continue }
            rows[app, default: ExplorerRows()].add(metric, cell: RollupRows.Cell(day: item.day.string, meta: item.meta))
            // Beside the fold's other task, this one would hold the second of the cooperative
            // pool's threads for a whole batch: the door's requests wait behind both.
            if index % 32 == 31 { await Task.yield() }
        }
        for app in rows.keys.sorted() {
            try await rows[app]?.flushFine(app: app, on: connection, logger: logger)
        }
    }

    /// Merges the version-level explorer rows of a batch (``foldExplorer(_:into:on:logger:)``) into
    /// the stored ones.
    static func flushVersionLevel(
        _ carry: ExplorerCarry, on connection: PostgresConnection, logger: Logger
    ) async throws {
        for (app, explorer) in carry.take().sorted(by: { $0.key < $1.key }) {
            try await explorer.flushVersionLevel(app: app, on: connection, logger: logger)
        }
    }

    /// The decoded documents of `batch`: those this node retained, the others decoded again from
    /// their raw copies. Missing: a document that cannot be read again (logged).
    func items(for batch: [Candidate], on connection: PostgresConnection) async throws -> [Int64: IngestItem] {
        var items: [Int64: IngestItem] = [:]
        retained.withLock { retained in
            for candidate in batch { items[candidate.id] = retained.take(candidate.id) }
        }
        let missing = batch.filter { items[$0.id] == nil }
        guard !missing.isEmpty else { return items }
        let ids = missing.map(\.id)
        let days = Array(Set(missing.map(\.day)))
        var raws: [Int64: ByteBuffer] = [:]
        for try await (id, raw) in try await connection.query(
            "SELECT payload, raw FROM payload_raw WHERE day = ANY(\(days)::text[]::date[]) AND payload = ANY(\(ids))",
            logger: logger
        ).decode((Int64, ByteBuffer).self) {
            raws[id] = raw
        }
        for candidate in missing {
            guard let raw = raws[candidate.id] else {
                logger.error("payload \(candidate.id) has no raw copy: counted nowhere")
                continue
            }
            switch IngestPipeline.redecode(
                raw: Array(buffer: raw), kind: candidate.kind, app: candidate.bundle, receivedAt: candidate.received)
            {
            case .success(let item): items[candidate.id] = item
            case .failure(let error):
                logger.error("payload \(candidate.id) could not be decoded again: counted nowhere: \(error)")
            }
        }
        return items
    }

    /// Folds one document: its rollup rows to `rollups`, its per-state rows (iOS 27) to `states`,
    /// its diagnostics (crash groups, rows, frames) written now. Its explorer cells are
    /// ``foldExplorer(_:on:logger:)``'s.
    static func fold(
        _ item: IngestItem, payload: Int64, app: Int64, rollups: inout RollupRows, states: inout StateRows,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let day = item.day.string
        switch item.document.content {
        case .metric(let metric):
            rollups.add(metric, cell: RollupRows.Cell(day: day, meta: item.meta))
            states.add(metric, payload: payload)
        case .diagnostic(let diagnostics):
            for (ordinal, diagnostic) in diagnostics.diagnostics.enumerated() {
                let group = try await crashGroup(
                    diagnostic, app: app, occurredAt: item.occurredAt, on: connection, logger: logger)
                let cell = RollupRows.Cell(day: day, meta: diagnostic.meta)
                let id = try await insert(
                    diagnostic, ordinal: ordinal, payload: payload, day: day, group: group, cell: cell,
                    occurredAt: item.occurredAt, on: connection, logger: logger)
                states.addDiagnostic(id, day: day, states: diagnostic.appStates)
                rollups.addDiagnostic(cell: cell, kind: diagnostic.kind.rawValue, group: group)
            }
        }
    }

    /// Folds until every document acknowledged before the call is folded (another process
    /// folding: waits for it), within the store's time bound per batch.
    package func foldAll() async throws {
        try await waitForPool()
        let logger = self.logger
        var idle = 0
        var target: Int64?
        while true {
            let barrier = try await client.withConnection { connection in
                try await Self.foldBarrier(target: target, on: connection, logger: logger)
            }
            target = barrier.target
            guard barrier.pending else { return }
            let result = try await withDeadline(timeout, "fold") { try await self.foldOnce() }
            if result.busy {
                idle += 1
                try await Task.sleep(for: .milliseconds(min(100, 2 * idle)))
            } else {
                idle = 0
            }
        }
    }
}
