import Foundation
import LifelineIngest
import LifelineModel
import LifelineStorage
import PostgresNIO

/// Ingest on PostgreSQL: requests are grouped into transactions (``WriteQueue``: what waits when
/// a writer is free goes together, as the SQLite writer's group commit), each acknowledged after
/// its transaction's COMMIT. Idempotency is the database's: `(app, content_hash)` and `(app,
/// idempotency key)` are unique, and `INSERT … ON CONFLICT DO NOTHING` waits for a concurrent
/// transaction holding the same key, so two nodes receiving the same document at once store it
/// once. The door appends: a transaction writes the index row (`payloads`) and the raw copy of each
/// new document, nothing else; the leader's aggregator (``PostgresStore/foldOnce(limit:)``) folds
/// them into the figures behind it. A deadlock or serialization failure between writers is retried.
extension PostgresStore: DocumentWriter {
    package func write(_ request: IngestRequest) async throws(IngestError) -> IngestOutcome {
        if request.items.contains(where: { $0.contentHash.count != 32 }) {
            throw IngestError(.unprocessable, code: "invalid", "the content hash must be 32 bytes (SHA-256)")
        }
        do {
            let job = WriteJob(request)
            return try await withDeadline(timeout, "ingest") { try await self.writeQueue.submit(job, to: self) }
        } catch let error as IngestError {
            throw error
        } catch let error as StoreError where error.code == .unavailable {
            // The write may still commit after this answer: a retry (same content, same key) is
            // then answered as a duplicate, never counted twice.
            logger.warning("postgres write timed out", metadata: ["error": "\(error)"])
            throw IngestError(
                .unavailable, code: "database_unavailable",
                "the database did not answer within \(timeout.seconds) s; nothing was acknowledged, retry later")
        } catch {
            logger.error("postgres write failed", metadata: ["error": "\(String(reflecting: error))"])
            throw IngestError(.internal, code: "internal", "internal error")
        }
    }

    /// Writes `jobs` in one transaction; when that fails and they are several, each again on its own
    /// (one bad request does not fail the others). One result per job, in order.
    package func writeGrouped(_ jobs: [WriteJob]) async -> [Result<IngestOutcome, IngestError>] {
        do {
            return try await write(jobs).map { .success($0) }
        } catch {
            guard jobs.count > 1 else { return [.failure(error)] }
            var results: [Result<IngestOutcome, IngestError>] = []
            for job in jobs {
                do {
                    results += try await write([job]).map { .success($0) }
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// Writes `jobs` in one transaction (their days' partitions first), retrying deadlocks and
    /// serialization failures; errors as ``IngestError``.
    func write(_ jobs: [WriteJob]) async throws(IngestError) -> [IngestOutcome] {
        let today = UTCDay(epochSeconds: Int64(Date().timeIntervalSince1970))
        var attempt = 0
        while true {
            attempt += 1
            do {
                for day in Set(jobs.flatMap { $0.items.map(\.day.string) }) {
                    try await ensurePartition(day: day, today: today)
                }
                return try await writeOnce(jobs)
            } catch {
                let server = Self.serverError(error)
                if let server, attempt < 5, Self.isRetryable(server) {
                    try? await Task.sleep(for: .milliseconds(5 * attempt))
                    continue
                }
                let ours =
                    error is PostgresStoreError
                    || (error as? PostgresTransactionError)?.closureError is PostgresStoreError
                if ours || server.map({ !Self.isUnavailable($0) }) == true {
                    logger.error("postgres write failed", metadata: ["error": "\(String(reflecting: error))"])
                    throw IngestError(.internal, code: "internal", "internal error")
                }
                logger.warning("postgres unavailable", metadata: ["error": "\(String(reflecting: error))"])
                throw IngestError(
                    .unavailable, code: "database_unavailable",
                    "the database cannot take the write now; nothing was stored, retry later")
            }
        }
    }

    /// The error the server sent, if `error` is one (directly, or inside a transaction's error:
    /// `withTransaction` wraps what its closure or COMMIT threw).
    static func serverError(_ error: any Error) -> PSQLError? {
        if let error = error as? PSQLError { return error.serverInfo != nil ? error : nil }
        guard let transaction = error as? PostgresTransactionError else { return nil }
        for inner in [transaction.closureError, transaction.commitError, transaction.beginError] {
            if let inner = inner as? PSQLError, inner.serverInfo != nil { return inner }
        }
        return nil
    }

    /// A server error that says the database cannot work now, not that the request or the store is
    /// wrong: connection exceptions (08), insufficient resources (53, e.g. too many connections),
    /// operator intervention (57, e.g. shutting down), system errors (58).
    static func isUnavailable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return true }
        // 55P03: lock_timeout; 57014 (in class 57): statement_timeout.
        return ["08", "53", "57", "58"].contains(String(state.prefix(2))) || state == "55P03"
    }

    /// A deadlock (40P01) or serialization failure (40001) between concurrent writers.
    static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// One transaction for `jobs`. Rows that concurrent transactions may both want are locked in
    /// one global order, so batches of two nodes holding the same documents wait for each other
    /// instead of deadlocking: apps by name, idempotency keys by (app, key), documents by (app,
    /// content hash). A job whose idempotency key an earlier job of the batch
    /// claimed is a replay of that job; within the batch, the first job (then item) holding a
    /// document stores it and the later ones count it as a duplicate, as sequential requests would.
    private func writeOnce(_ jobs: [WriteJob]) async throws -> [IngestOutcome] {
        let logger = self.logger
        let cached = appIDs.withLock { cache in cache }
        let (outcomes, created, fresh) = try await client.withTransaction(logger: logger) { connection in
            var apps: [String: Int64] = [:]
            var created: [String: Int64] = [:]
            for name in Set(jobs.map(\.request.app)).sorted() {
                if let known = cached[name] {
                    apps[name] = known
                } else {
                    let id = try await Self.appID(name, on: connection, logger: logger)
                    apps[name] = id
                    created[name] = id
                }
            }
            let appOf = jobs.map { apps[$0.request.app] ?? 0 }
            var outcomes = [IngestOutcome?](repeating: nil, count: jobs.count)
            // Idempotency keys: claimed in (app, key) order; a later job of the batch with a key
            // claimed here replays the claiming job.
            struct Claim: Hashable {
                var app: Int64
                var key: String
            }
            var claims: [Claim: Int] = [:]
            var replays: [Int: Int] = [:]
            let keyed = jobs.indices.compactMap { index in
                jobs[index].request.idempotencyKey.map { (index: index, claim: Claim(app: appOf[index], key: $0)) }
            }.sorted { ($0.claim.app, $0.claim.key, $0.index) < ($1.claim.app, $1.claim.key, $1.index) }
            let now = Int64(Date().timeIntervalSince1970)
            for (index, claim) in keyed {
                if let first = claims[claim] {
                    replays[index] = first
                    continue
                }
                let (app, key) = (claim.app, claim.key)
                let claimed = try await connection.query(
                    """
                    INSERT INTO idempotency_keys (app, key, accepted, duplicates, payload_ids, created_at)
                    VALUES (\(app), \(key), 0, 0, '{}', \(now)) ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger
                ).collect()
                if !claimed.isEmpty {
                    claims[claim] = index
                    continue
                }
                for try await ids in try await connection.query(
                    "SELECT payload_ids FROM idempotency_keys WHERE app = \(app) AND key = \(key)", logger: logger
                ).decode([Int64].self) {
                    outcomes[index] = IngestOutcome(accepted: 0, duplicates: ids.count, ids: ids, replayed: true)
                }
                guard outcomes[index] != nil else { throw PostgresStoreError("idempotency record vanished") }
            }
            // Documents in (app, content hash) order, ties in job and item order.
            var order: [(job: Int, item: Int)] = []
            for index in jobs.indices where outcomes[index] == nil && replays[index] == nil {
                order += jobs[index].items.indices.map { (index, $0) }
            }
            order.sort { a, b in
                let (x, y) = (jobs[a.job].items[a.item].contentHash, jobs[b.job].items[b.item].contentHash)
                if appOf[a.job] != appOf[b.job] { return appOf[a.job] < appOf[b.job] }
                if x != y { return x.lexicographicallyPrecedes(y) }
                return (a.job, a.item) < (b.job, b.item)
            }
            var stored = jobs.map { [(id: Int64, isNew: Bool)?](repeating: nil, count: $0.items.count) }
            let appended = try await Self.append(
                order.map { (appOf[$0.job], jobs[$0.job].items[$0.item]) }, on: connection, logger: logger)
            for ((job, item), entry) in zip(order, appended) { stored[job][item] = entry }
            for index in jobs.indices where outcomes[index] == nil && replays[index] == nil {
                var outcome = IngestOutcome(accepted: 0, duplicates: 0, ids: [])
                for entry in stored[index] {
                    guard let entry else { throw PostgresStoreError("a document of the batch was not written") }
                    outcome.ids.append(entry.id)
                    if entry.isNew { outcome.accepted += 1 } else { outcome.duplicates += 1 }
                }
                outcomes[index] = outcome
            }
            for (index, first) in replays {
                let ids = outcomes[first]?.ids ?? []
                outcomes[index] = IngestOutcome(accepted: 0, duplicates: ids.count, ids: ids, replayed: true)
            }
            for (claim, index) in claims.sorted(by: { ($0.key.app, $0.key.key) < ($1.key.app, $1.key.key) }) {
                guard let outcome = outcomes[index] else { continue }
                let (app, key) = (claim.app, claim.key)
                let (accepted, duplicates, ids) = (outcome.accepted, outcome.duplicates, outcome.ids)
                try await connection.query(
                    """
                    UPDATE idempotency_keys SET accepted = \(accepted), duplicates = \(duplicates), payload_ids = \(ids)
                    WHERE app = \(app) AND key = \(key)
                    """, logger: logger)
            }
            var fresh: [(Int64, IngestItem)] = []
            for (job, item) in order {
                if let entry = stored[job][item], entry.isNew { fresh.append((entry.id, jobs[job].items[item])) }
            }
            return (outcomes.compactMap { $0 }, created, fresh)
        }
        // Known after COMMIT only: an app row created by a transaction that rolled back is no id.
        if !created.isEmpty { appIDs.withLock { $0.merge(created) { old, _ in old } } }
        // Committed: the leader's fold may take them decoded.
        retained.withLock { retained in
            for (id, item) in fresh { retained.add(id, item) }
        }
        return outcomes
    }

    /// The id of `bundleID`, created if new (without locking an existing row).
    package static func appID(_ bundleID: String, on connection: PostgresConnection, logger: Logger) async throws
        -> Int64
    {
        try await connection.query(
            "INSERT INTO apps (bundle_id) VALUES (\(bundleID)) ON CONFLICT DO NOTHING", logger: logger)
        for try await id in try await connection.query(
            "SELECT id FROM apps WHERE bundle_id = \(bundleID)", logger: logger
        ).decode(Int64.self) {
            return id
        }
        throw PostgresStoreError("app row missing after insert")
    }
}
