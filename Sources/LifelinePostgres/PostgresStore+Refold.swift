import Foundation
import LifelineIngest
import LifelineModel
import LifelineStorage
import PostgresNIO

extension PostgresStore {
    /// The documents the fold has counted (`p`): stored before the aggregator (no `xact`), below
    /// the watermark (`s`), or folded ahead of it.
    static let foldedCondition = """
        (p.xact IS NULL OR p.xact < s.folded_xact OR EXISTS (SELECT 1 FROM folded_ahead f WHERE f.payload = p.id))
        """

    /// Documents per batch of a refold (read, decoded and upserted together).
    static let refoldBatch = 1_024

    /// Rebuilds the figures (rollups and explorer cells at both levels, per-state rows) of `app`
    /// (every app when `nil`) from day `from` on (every day when `nil`) from the raw documents, in one
    /// transaction holding the fold's lock: every node's readers see the old figures or the new
    /// ones, and the leader's fold waits (the documents it has not reached are its own, and stay
    /// so). Diagnostics are counted again from their stored rows; crash groups keep their ids.
    /// Days before the last day of an app with a metric document whose raw copy is gone keep their
    /// figures: there is nothing to rebuild them from. `progress` is told (done, total) per batch.
    package func refold(
        app: String? = nil, from: UTCDay? = nil, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> RefoldReport {
        try await waitForPool()
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await client.withConnection { connection in
                    try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: self.logger)
                    do {
                        // A refold of a large database takes longer than a request's bound.
                        try await connection.query("SET LOCAL statement_timeout = 0", logger: self.logger)
                        let report = try await self.refold(app: app, from: from, progress: progress, on: connection)
                        try await connection.query("COMMIT", logger: self.logger)
                        return report
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: self.logger)
                        throw error
                    }
                }
            } catch {
                // The leader's fold committed between this snapshot and its lock: start again.
                if let server = Self.serverError(error), Self.isRetryable(server), attempt < 5 { continue }
                throw error
            }
        }
    }

    private func refold(
        app: String?, from: UTCDay?, progress: (@Sendable (Int, Int) -> Void)?, on connection: PostgresConnection
    ) async throws -> RefoldReport {
        let logger = self.logger
        // The fold's lock: the leader waits until this commits.
        try await connection.query("SELECT 1 FROM aggregation_state WHERE id = 1 FOR UPDATE", logger: logger)
        var apps: [(Int64, String)] = []
        for try await row in try await connection.query(
            "SELECT id, bundle_id FROM apps WHERE \(app)::text IS NULL OR bundle_id = \(app) ORDER BY id",
            logger: logger
        ).decode((Int64, String).self) {
            apps.append(row)
        }
        if let app, apps.isEmpty { throw StoreError(.notFound, "no data for app \(app)") }
        var report = RefoldReport()
        var firsts: [(id: Int64, bundle: String, first: String)] = []
        for (appID, bundle) in apps {
            var lastRawless: String?
            for try await day in try await connection.query(
                """
                SELECT max(p.day)::text FROM payloads p WHERE p.app = \(appID) AND p.kind = 'metric'
                    AND NOT EXISTS (SELECT 1 FROM payload_raw r WHERE r.day = p.day AND r.payload = p.id)
                """, logger: logger
            ).decode(String?.self) {
                lastRawless = day
            }
            var first = from ?? .first
            if let last = lastRawless.flatMap({ UTCDay($0) }), let next = UTCDay(ordinal: last.ordinal + 1),
                next > first
            {
                first = next
            }
            firsts.append((appID, bundle, first.string))
        }
        var total = 0
        for (appID, _, first) in firsts {
            for try await count in try await connection.query(
                """
                SELECT count(*) FROM payloads p, aggregation_state s WHERE s.id = 1 AND p.app = \(appID)
                    AND p.kind = 'metric' AND p.day >= \(first)::date AND \(unescaped: Self.foldedCondition)
                """, logger: logger
            ).decode(Int64.self) {
                total += Int(count)
            }
        }
        var done = 0
        for (appID, bundle, first) in firsts {
            report.apps += 1
            report.firstDays[bundle] = first
            // The statements below name their table in the SQL text: `$1` is the app, `$2` the first day.
            func scoped(_ sql: String) -> PostgresQuery {
                var binds = PostgresBindings()
                binds.append(appID)
                binds.append(first)
                return PostgresQuery(unsafeSQL: sql, binds: binds)
            }
            for table in Self.rollupTables {
                try await connection.query(
                    scoped("DELETE FROM \(table) WHERE app = $1 AND day >= $2::date"), logger: logger)
            }
            for table in ["payload_states", "state_exit_counts", "state_signposts", "state_buckets"] {
                try await connection.query(
                    scoped(
                        """
                        DELETE FROM \(table) WHERE payload IN (SELECT p.id FROM payloads p, aggregation_state s
                            WHERE s.id = 1 AND p.app = $1 AND p.kind = 'metric' AND p.day >= $2::date
                            AND \(Self.foldedCondition))
                        """), logger: logger)
            }
            // Diagnostics: every stored row is the fold's; counted again per cell, at both levels.
            for (suffix, os, device, groups) in [
                ("", "d.os_version", "d.device_type", ", d.os_version, d.device_type"), ("_v", "''", "''", ""),
            ] {
                let inserted = try await connection.query(
                    scoped(
                        """
                        INSERT INTO diagnostic_rollup\(suffix) (app, day, version, os, device, kind, crash_group, count)
                        SELECT $1, d.day, d.app_version, \(os), \(device), d.kind, d.crash_group, count(*)
                        FROM diagnostics d JOIN payloads p ON p.id = d.payload
                        WHERE p.app = $1 AND d.day >= $2::date
                        GROUP BY d.day, d.app_version\(groups), d.kind, d.crash_group
                        RETURNING count
                        """), logger: logger
                ).decode(Int64.self)
                var cells = 0
                for try await _ in inserted { cells += 1 }
                // The fine cells, as the SQLite store counts them.
                if suffix.isEmpty { report.diagnostics += cells }
            }
            // The metric documents, batch by batch, from their raw copies.
            var after: Int64 = 0
            while true {
                var batch: [(id: Int64, received: Int64, day: String)] = []
                for try await row in try await connection.query(
                    """
                    SELECT p.id, p.received_at_ms, p.day::text FROM payloads p, aggregation_state s
                    WHERE s.id = 1 AND p.app = \(appID) AND p.kind = 'metric' AND p.day >= \(first)::date
                        AND p.id > \(after) AND \(unescaped: Self.foldedCondition)
                    ORDER BY p.id LIMIT \(Int64(Self.refoldBatch))
                    """, logger: logger
                ).decode((Int64, Int64, String).self) {
                    batch.append(row)
                }
                guard let last = batch.last else { break }
                after = last.id
                let (ids, days) = (batch.map(\.id), Array(Set(batch.map(\.day))))
                var raws: [Int64: ByteBuffer] = [:]
                for try await (id, raw) in try await connection.query(
                    """
                    SELECT payload, raw FROM payload_raw WHERE day = ANY(\(days)::text[]::date[]) AND payload = ANY(\(ids))
                    """, logger: logger
                ).decode((Int64, ByteBuffer).self) {
                    raws[id] = raw
                }
                var rollups = RollupRows()
                var states = StateRows()
                var decoded: [(app: Int64, item: IngestItem)] = []
                for entry in batch {
                    guard let raw = raws[entry.id],
                        case .success(let item) = IngestPipeline.redecode(
                            raw: Array(buffer: raw), kind: "metric", app: bundle, receivedAt: entry.received)
                    else {
                        report.unreadable += 1
                        continue
                    }
                    try await Self.fold(
                        item, payload: entry.id, app: appID, rollups: &rollups, states: &states, on: connection,
                        logger: logger)
                    decoded.append((appID, item))
                    report.documents += 1
                }
                try await rollups.flush(app: appID, on: connection, logger: logger)
                let explorer = ExplorerCarry()
                try await Self.foldExplorer(decoded, into: explorer, on: connection, logger: logger)
                try await Self.flushVersionLevel(explorer, on: connection, logger: logger)
                try await states.flush(on: connection, logger: logger)
                done += batch.count
                progress?(done, total)
            }
        }
        return report
    }
}
