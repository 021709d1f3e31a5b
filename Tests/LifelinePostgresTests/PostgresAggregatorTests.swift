import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineStorage
import LifelineTestSupport
import Logging
import PostgresNIO
import Testing

/// The aggregator stage on PostgreSQL against a real server: nodes append, one process folds,
/// the watermark never passes a transaction still open, and answers never lag what was
/// acknowledged.
@Suite("PostgreSQL aggregator")
struct PostgresAggregatorTests {
    static let app = PostgresStoreTests.app
    static let logger = PostgresStoreTests.quiet

    static func metricItems(devices: Int, days: Int, seed: UInt64) throws -> [IngestItem] {
        try PostgresStoreTests.items(devices: devices, days: days, seed: seed).filter { item in
            item.family == .metric && item.isDeviceDay
        }
    }

    /// The same documents under other hashes (`salt` flips their first byte): stored again, not
    /// duplicates.
    static func copies(of items: [IngestItem], salt: UInt8) -> [IngestItem] {
        items.map { item in
            var item = item
            item.contentHash[0] ^= salt
            return item
        }
    }

    /// The one number `sql` selects, on `connection`.
    static func count(_ sql: String, on connection: PostgresConnection) async throws -> Int64 {
        var count: Int64 = -1
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            .decode(Int64.self)
        {
            count = value
        }
        return count
    }

    static func watermark(_ location: PostgresLocation) async throws -> (folded: Int64, ahead: Int) {
        let configuration = try location.connectionConfiguration()
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        var result: (Int64, Int) = (0, 0)
        for try await (folded, ahead) in try await connection.query(
            "SELECT folded_xact, (SELECT count(*) FROM folded_ahead)::bigint FROM aggregation_state", logger: logger
        ).decode((Int64, Int64).self) {
            result = (folded, Int(ahead))
        }
        return result
    }

    /// Writes `items` in requests of 7, folds them all and reads every figure.
    static func folded(_ items: [IngestItem], into store: PostgresStore) async throws -> PostgresStoreTests.Figures {
        for chunk in stride(from: 0, to: items.count, by: 7) {
            _ = try await store.write(
                IngestRequest(app: app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
        }
        try await store.foldAll()
        return try await PostgresStoreTests.Figures.read(store)
    }

    static func deviceDays(_ store: PostgresStore) async throws -> Int64 {
        let scope = Scope(app: app, days: DayRange(from: "2026-09-01", to: "2026-11-30"))
        return try await AnalysisRunner(source: store).analyze { try await $0.usage(scope) }.map(\.payloads).reduce(
            0, +)
    }

    @Test(
        "a transaction held open on one node: the watermark stays below it, later documents are folded ahead, and once it commits its document is counted once"
    )
    func watermarkNeverPassesAnOpenTransaction() async throws {
        guard let first = try await PostgresStoreTests.store() else { return }
        let second = try PostgresStore(location: first.location, logger: Self.logger)
        let items = try Self.metricItems(devices: 12, days: 2, seed: 21)
        #expect(items.count >= 12)
        let (held, before, after) = (items[0], Array(items[1..<4]), Array(items[4...]))
        _ = try await first.write(IngestRequest(app: Self.app, items: before))
        try await first.foldAll()

        // Node one's door transaction appends a document and stays open.
        let connection = try await PostgresConnection.connect(
            configuration: try first.location.connectionConfiguration(), id: 2, logger: Self.logger)
        try await connection.query("BEGIN", logger: Self.logger)
        let appID = try await PostgresStore.appID(Self.app, on: connection, logger: Self.logger)
        let (heldID, isNew) = try await PostgresStore.append(held, app: appID, on: connection, logger: Self.logger)
        #expect(isNew)
        var heldXact: Int64 = 0
        for try await xact in try await connection.query(
            "SELECT pg_current_xact_id()::text::bigint", logger: Self.logger
        )
        .decode(Int64.self) {
            heldXact = xact
        }

        // Node two appends and acknowledges the others while it is open: higher payload ids and
        // transaction ids, committed first (ids commit out of order).
        for chunk in stride(from: 0, to: after.count, by: 3) {
            let outcome = try await second.write(
                IngestRequest(app: Self.app, items: Array(after[chunk..<min(chunk + 3, after.count)])))
            #expect(outcome.accepted == min(3, after.count - chunk))
        }
        // Answers include every acknowledged document at once, and the open one not.
        #expect(try await Self.deviceDays(second) == Int64(before.count + after.count))
        let (folded, ahead) = try await Self.watermark(first.location)
        #expect(folded <= heldXact, "the watermark passed a transaction still open")
        // Every document committed above it is folded ahead; so may be earlier ones, when another
        // test's transaction on the shared cluster holds the watermark lower still.
        #expect(
            (after.count...(before.count + after.count)).contains(ahead),
            "the documents committed above the watermark are folded ahead: \(ahead)")
        // Folding again changes nothing while it stays open.
        try await first.foldAll()
        #expect(try await Self.deviceDays(first) == Int64(before.count + after.count))

        try await connection.query("COMMIT", logger: Self.logger)
        try await connection.close()
        // Acknowledged now: the next answer counts it, once. (The watermark passes it when no older
        // transaction of the cluster is open: other tests' may be, so that is not asserted.)
        #expect(try await Self.deviceDays(second) == Int64(items.count))
        #expect(try await Self.deviceDays(first) == Int64(items.count))
        #expect(try await second.refreshAggregationLag().documents == 0)
        let statistics = second.writerStatistics
        #expect(statistics.foldSkipped == 0)
        #expect(try await second.write(IngestRequest(app: Self.app, items: [held])).ids == [heldID])

        // The same documents written in one go by one node give the same figures.
        guard let alone = try await PostgresStoreTests.store() else { return }
        _ = try await alone.write(IngestRequest(app: Self.app, items: items))
        let expected = try await PostgresStoreTests.Figures.read(alone)
        let actual = try await PostgresStoreTests.Figures.read(second)
        #expect(actual == expected, "differ: \(AggregatorTests.differences(actual, expected))")
        await alone.shutdown()
        await second.shutdown()
        await first.shutdown()
    }

    @Test("the leader folds behind two appending nodes; a follower's answer never lags its acknowledgements")
    func followersNeverLag() async throws {
        guard let leader = try await PostgresStoreTests.store() else { return }
        let follower = try PostgresStore(location: leader.location, logger: Self.logger)
        let folding = Task { await leader.runAggregator(isLeader: { true }) }
        let items = try Self.metricItems(devices: 30, days: 2, seed: 23)
        #expect(items.count >= 40)
        for (index, item) in items.enumerated() {
            let node = index.isMultiple(of: 2) ? leader : follower
            let outcome = try await node.write(IngestRequest(app: Self.app, items: [item]))
            #expect(outcome.accepted == 1)
            let seen = try await Self.deviceDays(follower)
            #expect(seen == Int64(index + 1), "after \(index + 1) acknowledgements")
            if seen != Int64(index + 1) { break }
        }
        try await leader.foldAll()
        let lag = try await follower.refreshAggregationLag()
        #expect(lag.documents == 0)
        #expect(leader.writerStatistics.foldedDocuments > 0, "the leader folded")
        folding.cancel()
        await folding.value
        await follower.shutdown()
        await leader.shutdown()
    }

    @Test("a PostgreSQL refold answers every figure exactly as the fold did, for all days and from a day on")
    func refoldReproducesEveryFigure() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try PostgresStoreTests.items(devices: 30, days: 4, seed: 29)
        let folded = try await Self.folded(items, into: store)
        #expect(!folded.crashes.isEmpty && !folded.handlers.isEmpty && !folded.exitsByAppState.isEmpty)

        let report: RefoldReport
        do {
            report = try await store.refold()
        } catch {
            Issue.record("refold failed: \(String(reflecting: error))")
            return
        }
        let metrics = items.filter { $0.family == .metric }.count
        #expect(report.documents == metrics && report.unreadable == 0 && report.diagnostics > 0)
        let refolded = try await PostgresStoreTests.Figures.read(store)
        #expect(refolded == folded, "differ: \(AggregatorTests.differences(refolded, folded))")

        let partial = try await store.refold(app: Self.app, from: UTCDay("2026-10-03"))
        #expect(partial.firstDays == [Self.app: "2026-10-03"])
        #expect(partial.documents > 0 && partial.documents < metrics)
        let again = try await PostgresStoreTests.Figures.read(store)
        #expect(again == folded, "differ: \(AggregatorTests.differences(again, folded))")
        await #expect(throws: StoreError.self) { try await store.refold(app: "com.example.unknown") }
        await store.shutdown()
    }

    @Test(
        "explorer rows written before migration postgres/0015 (every category in one) answer as before; a refold rewrites them"
    )
    func explorerRowsBefore0015() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try PostgresStoreTests.items(devices: 30, days: 3, seed: 31)
        let folded = try await Self.folded(items, into: store)
        #expect(!folded.explorer.isEmpty)

        // What a database upgraded from 0014 holds: one row per cell, every category, category ''.
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 3, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        for table in ["explorer_cells", "explorer_cells_v"] {
            struct Cell: Hashable {
                var app: Int64
                var day, version, os, device, state: String
            }
            var whole: [Cell: ExplorerCellMap] = [:]
            for try await (app, day, version, os, device, state, category, bytes) in try await connection.query(
                "SELECT app, day::text, version, os, device, app_state, category, cells FROM \(unescaped: table)",
                logger: Self.logger
            ).decode((Int64, String, String, String, String, String, String, ByteBuffer).self) {
                #expect(category != "")
                let cell = Cell(app: app, day: day, version: version, os: os, device: device, state: state)
                whole[cell, default: ExplorerCellMap()].merge(try ExplorerCellMap(decoding: bytes.readableBytesView))
            }
            try await connection.query("DELETE FROM \(unescaped: table)", logger: Self.logger)
            for (cell, cells) in whole {
                let bytes = ByteBuffer(bytes: cells.encoded())
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: table) (app, day, version, os, device, app_state, category, cells)
                    VALUES (\(cell.app), \(cell.day)::date, \(cell.version), \(cell.os), \(cell.device), \(cell.state),
                        '', \(bytes))
                    """, logger: Self.logger)
            }
        }
        let upgraded = try await PostgresStoreTests.Figures.read(store)
        #expect(upgraded.explorer == folded.explorer)
        #expect(upgraded.insights == folded.insights)

        _ = try await store.refold()
        let refolded = try await PostgresStoreTests.Figures.read(store)
        #expect(refolded == folded, "differ: \(AggregatorTests.differences(refolded, folded))")
        for try await left in try await connection.query(
            "SELECT (SELECT count(*) FROM explorer_cells WHERE category = '') + (SELECT count(*) FROM explorer_cells_v WHERE category = '')",
            logger: Self.logger
        ).decode(Int64.self) {
            #expect(left == 0)
        }
        await store.shutdown()
    }

    @Test("histogram buckets merged into their stored rows over many small folds answer as one fold of them all")
    func bucketsMergedAcrossFolds() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try Self.metricItems(devices: 10, days: 2, seed: 41)
        for chunk in stride(from: 0, to: items.count, by: 7) {
            _ = try await store.write(
                IngestRequest(app: Self.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
        }
        var folds = 0
        while try await store.foldOnce(limit: 3).more { folds += 1 }
        #expect(folds >= 5)
        let merged = try await PostgresStoreTests.Figures.read(store)
        #expect(merged.percentiles.contains { !$0.isEmpty })
        _ = try await store.refold()
        let whole = try await PostgresStoreTests.Figures.read(store)
        #expect(merged == whole, "differ: \(AggregatorTests.differences(merged, whole))")

        // Damaged rows (arrays of unequal lengths, a null element) are replaced by the batch's
        // buckets: the fold goes on, and every row reads again.
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 5, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        func ragged() async throws -> Int64 {
            try await Self.count(
                "SELECT count(*) FROM bucket_cells_v WHERE cardinality(starts) <> cardinality(counts)", on: connection)
        }
        try await connection.query("UPDATE bucket_cells_v SET counts = counts[1:1]", logger: Self.logger)
        #expect(try await ragged() > 0)
        // A null bound (it does not decode at all) at the fine level.
        func nulls() async throws -> Int64 {
            try await Self.count(
                "SELECT count(*) FROM bucket_cells WHERE array_position(starts, NULL) IS NOT NULL", on: connection)
        }
        try await connection.query("UPDATE bucket_cells SET starts[1] = NULL", logger: Self.logger)
        #expect(try await nulls() > 0)
        _ = try await Self.folded(Self.copies(of: items, salt: 0x5A), into: store)
        #expect(try await Self.deviceDays(store) == Int64(2 * items.count), "the fold went on")
        #expect(try await ragged() == 0)
        #expect(try await nulls() == 0)
        await store.shutdown()
    }

    @Test(
        "a stored explorer row that does not read is replaced by the fold's cells; the fold goes on; a refold rebuilds it"
    )
    func undecodableExplorerRowReplaced() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try Self.metricItems(devices: 8, days: 1, seed: 37)
        let whole = try await Self.folded(items, into: store)
        #expect(!whole.explorer.isEmpty)
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 4, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        // The same documents again, under new hashes, after every version-level row was damaged:
        // the fold merges into rows that do not read.
        try await connection.query("UPDATE explorer_cells_v SET cells = '\\x07ff'::bytea", logger: Self.logger)
        let damaged = try await Self.count("SELECT count(*) FROM explorer_cells_v", on: connection)
        #expect(damaged > 0)
        _ = try await Self.folded(Self.copies(of: items, salt: 0xA5), into: store)
        #expect(try await Self.deviceDays(store) == Int64(2 * items.count), "the fold went on")
        var readable: Int64 = 0
        for try await bytes in try await connection.query("SELECT cells FROM explorer_cells_v", logger: Self.logger)
            .decode(ByteBuffer.self)
        {
            if (try? ExplorerCellMap(decoding: bytes.readableBytesView)) != nil { readable += 1 }
        }
        #expect(readable == damaged, "every damaged row was replaced by cells that read")

        _ = try await store.refold()
        let refolded = try await PostgresStoreTests.Figures.read(store)
        #expect(refolded.explorer.count == whole.explorer.count)
        #expect(refolded.explorer != whole.explorer, "the refold counts both copies of every document")
        await store.shutdown()
    }

    @Test("documents of the same cells in a later fold merge into the stored explorer rows at both levels")
    func laterFoldMergesStoredExplorerRows() async throws {
        guard let twice = try await PostgresStoreTests.store(), let once = try await PostgresStoreTests.store()
        else { return }
        let items = try Self.metricItems(devices: 6, days: 2, seed: 41)
        let copies = Self.copies(of: items, salt: 0x33)
        let first = try await Self.folded(items, into: twice)
        // The copies name the same cells: the second fold finds every row it adds to stored.
        let merged = try await Self.folded(copies, into: twice)
        let together = try await Self.folded(items + copies, into: once)
        #expect(!first.explorer.isEmpty)
        #expect(merged.explorer != first.explorer, "the second fold's documents are counted")
        #expect(merged.explorer == together.explorer, "as if both had been folded at once")
        await twice.shutdown()
        await once.shutdown()
    }

    @Test("a read that does not wait for the fold (a /metrics scrape) answers what is folded so far, at once")
    func scrapeReadsFoldedFigures() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try Self.metricItems(devices: 6, days: 1, seed: 31)
        _ = try await store.write(IngestRequest(app: Self.app, items: items))
        let folded = try await ReadFreshness.$waitsForFold.withValue(false) { try await Self.deviceDays(store) }
        #expect(folded == 0, "nothing is folded yet: no process folds")
        #expect(try await Self.deviceDays(store) == Int64(items.count), "an answer waits, or folds itself")
        await store.shutdown()
    }
}
