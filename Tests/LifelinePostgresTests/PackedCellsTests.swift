import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineStorage
import LifelineTestSupport
import PostgresNIO
import Synchronization
import Testing

/// Exit counts, signpost totals and histogram buckets packed one row per cell (migrations
/// postgres/0017, 0018 and 0019): rows of the layouts before them answer the same once migrated,
/// and folds merge into stored cells (`ll_merge_exits`, `ll_merge_signposts`, the leader's
/// bucket merge).
extension PostgresAggregatorTests {
    @Test(
        "exit, signpost and bucket rows of the layouts before migrations postgres/0017, 0018 and 0019 answer the same once packed"
    )
    func packedCellsMigrated() async throws {
        guard let server = PostgresServer.running() else { return }
        let store = try PostgresStore(url: try server.createDatabase(), logger: Self.logger)
        defer { Task { await store.shutdown() } }
        let before = EmbeddedPostgresMigrations.all.filter { $0.version < 17 }
        #expect(before.count == 16)
        _ = try await store.migrate(before)
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 11, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        try await connection.query(
            """
            INSERT INTO apps (id, bundle_id) VALUES (1, 'com.example.exits');
            """, logger: Self.logger)
        // Rows of the layouts before 0017 and 0018 at both levels (the version level's OS and
        // device are ''): (day, version, the row's own columns).
        let legacy: [(table: String, columns: String, rows: [(String, String, String)])] = [
            (
                "exit_rollup", "state, reason, count",
                [
                    ("2026-10-01", "1.0", "0, 'cumulativeAppWatchdogExitCount', 3"),
                    ("2026-10-01", "1.0", "1, 'cumulativeAppWatchdogExitCount', 5"),
                    ("2026-10-01", "1.0", "1, 'cumulativeMemoryPressureExitCount', 7"),
                    ("2026-10-02", "1.1", "0, 'cumulativeNormalAppExitCount', 11"),
                    ("2026-10-02", "1.1", "1, 'cumulativeAppWatchdogExitCount', 2"),
                ]
            ),
            (
                "signpost_rollup", "category, name, count",
                [
                    ("2026-10-01", "1.0", "'Sync', 'HandlerEntered', 9"),
                    ("2026-10-01", "1.0", "'Sync', 'HandlerExited', 4"),
                    ("2026-10-01", "1.0", "'Restore', 'Attempt', 1"),
                    ("2026-10-02", "1.1", "'Restore', 'Attempt', 2"),
                ]
            ),
            (
                "bucket_cells", "source, starts, ends, counts",
                [
                    ("2026-10-01", "1.0", "'\(Self.launch)', '{0,100}', '{100,200}', '{3,1}'"),
                    ("2026-10-01", "1.0", "'signpost:Sync/Handler', '{0}', '{50}', '{2}'"),
                    ("2026-10-02", "1.1", "'\(Self.launch)', '{0}', '{100}', '{5}'"),
                ]
            ),
        ]
        for (table, columns, rows) in legacy {
            for (suffix, os, device) in [("", "iOS 17.4", "iPhone15,2"), ("_v", "", "")] {
                let values = rows.map { "(1, '\($0.0)', '\($0.1)', '\(os)', '\(device)', \($0.2))" }
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(table)\(suffix) (app, day, version, os, device, \(columns)) VALUES "
                            + values.joined(separator: ", ")), logger: Self.logger)
            }
        }
        _ = try await store.migrate()
        #expect(try await Self.count("SELECT count(*) FROM signpost_cells", on: connection) == 2)
        #expect(try await Self.count("SELECT count(*) FROM signpost_cells_v", on: connection) == 2)
        #expect(try await Self.count("SELECT count(*) FROM exit_cells", on: connection) == 2)
        #expect(try await Self.count("SELECT count(*) FROM exit_cells_v", on: connection) == 2)
        // Migration postgres/0020: the exits per day, OS and device (one OS and device here).
        #expect(try await Self.count("SELECT count(*) FROM exit_cells_od WHERE version = ''", on: connection) == 2)
        #expect(try await Self.count("SELECT count(*) FROM bucket_cells", on: connection) == 2)
        #expect(
            try await Self.count(
                "SELECT count(*) FROM bucket_cells_v WHERE cardinality(sources) = 2 AND lengths = '{2,1}'",
                on: connection) == 1)
        #expect(
            try await Self.count(
                """
                SELECT count(*) FROM pg_tables WHERE tablename LIKE 'exit_rollup%' OR tablename LIKE 'signpost_rollup%'
                    OR tablename LIKE 'bucket_cells_packed%'
                """, on: connection) == 0)
        #expect(
            try await Self.count("SELECT count(*) FROM pg_proc WHERE proname = 'll_merge_buckets'", on: connection) == 0
        )

        let days = DayRange(from: "2026-10-01", to: "2026-10-02")
        func exits(_ groupBy: [GroupDimension]) async throws -> [String] {
            let scope = Scope(app: "com.example.exits", days: days, groupBy: groupBy)
            return try await AnalysisRunner(source: store).analyze { try await $0.exits(scope) }.map { row in
                let key = [row.key.version, row.key.os, row.key.device].map { $0 ?? "-" }.joined(separator: "|")
                return "\(key) \(row.state == .foreground ? "fg" : "bg") \(row.reason) \(row.count)"
            }.sorted()
        }
        #expect(
            try await exits([.version]) == [
                "1.0|-|- bg cumulativeAppWatchdogExitCount 5", "1.0|-|- bg cumulativeMemoryPressureExitCount 7",
                "1.0|-|- fg cumulativeAppWatchdogExitCount 3", "1.1|-|- bg cumulativeAppWatchdogExitCount 2",
                "1.1|-|- fg cumulativeNormalAppExitCount 11",
            ])
        // One group, two cells whose element arrays differ and share an element: summed across them.
        #expect(
            try await exits([.os, .device]) == [
                "-|iOS 17.4|iPhone15,2 bg cumulativeAppWatchdogExitCount 7",
                "-|iOS 17.4|iPhone15,2 bg cumulativeMemoryPressureExitCount 7",
                "-|iOS 17.4|iPhone15,2 fg cumulativeAppWatchdogExitCount 3",
                "-|iOS 17.4|iPhone15,2 fg cumulativeNormalAppExitCount 11",
            ])
        // Past `PackedReadLimit.cells` cells in scope, the same sums are read cell by cell.
        let cellByCell = PackedReadLimit.cellByCellReads.load(ordering: .relaxed)
        for groupBy: [GroupDimension] in [[.version], [.os, .device]] {
            let grouped = try await exits(groupBy)
            #expect(try await PackedReadLimit.$cells.withValue(1) { try await exits(groupBy) } == grouped)
        }
        #expect(PackedReadLimit.cellByCellReads.load(ordering: .relaxed) >= cellByCell + 2)
        func signposts(_ groupBy: [GroupDimension], categories: [String] = []) async throws -> [String] {
            let scope = Scope(app: "com.example.exits", days: days, groupBy: groupBy)
            return try await store.read { try await $0.signposts(scope, categories: categories) }.map { row in
                let key = [row.key.version, row.key.os, row.key.device].map { $0 ?? "-" }.joined(separator: "|")
                return "\(key) \(row.category)/\(row.name) \(row.count)"
            }.sorted()
        }
        #expect(
            try await signposts([.version]) == [
                "1.0|-|- Restore/Attempt 1", "1.0|-|- Sync/HandlerEntered 9", "1.0|-|- Sync/HandlerExited 4",
                "1.1|-|- Restore/Attempt 2",
            ])
        func buckets(_ groupBy: [GroupDimension], source: String) async throws -> [String] {
            let scope = Scope(app: "com.example.exits", days: days, groupBy: groupBy)
            return try await store.read { try await $0.buckets(scope, source: .metric(source)) }.map { row in
                let key = [row.key.version, row.key.os, row.key.device].map { $0 ?? "-" }.joined(separator: "|")
                return "\(key) \(row.start)-\(row.end) \(row.count)"
            }.sorted()
        }
        #expect(
            try await buckets([.version], source: Self.launch) == [
                "1.0|-|- 0.0-100.0 3", "1.0|-|- 100.0-200.0 1", "1.1|-|- 0.0-100.0 5",
            ])
        #expect(
            try await buckets([.os, .device], source: Self.launch) == [
                "-|iOS 17.4|iPhone15,2 0.0-100.0 8", "-|iOS 17.4|iPhone15,2 100.0-200.0 1",
            ])
        #expect(try await buckets([.version], source: "signpost:Sync/Handler") == ["1.0|-|- 0.0-50.0 2"])
        #expect(try await buckets([.version], source: "signpost:Sync/Other").isEmpty)
        // A cell holding both categories keeps only the wanted one's elements.
        #expect(
            try await signposts([.os, .device], categories: ["Sync"]) == [
                "-|iOS 17.4|iPhone15,2 Sync/HandlerEntered 9", "-|iOS 17.4|iPhone15,2 Sync/HandlerExited 4",
            ])
    }

    static let launch = "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"

    @Test(
        "exits, signposts and buckets folded in many small batches (stored cells merged by ll_merge_exits, ll_merge_signposts and the leader) equal one fold of them all"
    )
    func packedCellsMergedAcrossFolds() async throws {
        guard let once = try await PostgresStoreTests.store(), let small = try await PostgresStoreTests.store() else {
            return
        }
        defer {
            Task {
                await once.shutdown()
                await small.shutdown()
            }
        }
        let items = try Self.metricItems(devices: 12, days: 2, seed: 17)
        let whole = try await Self.folded(items, into: once)
        for chunk in stride(from: 0, to: items.count, by: 7) {
            _ = try await small.write(
                IngestRequest(app: Self.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
        }
        var folds = 0
        while try await small.foldOnce(limit: 3).more || folds == 0 { folds += 1 }
        try await small.foldAll()
        #expect(folds > 3)
        let pieces = try await PostgresStoreTests.Figures.read(small)
        #expect(!whole.exitsByVersion.isEmpty && !whole.exitsByDeviceAndOS.isEmpty)
        #expect(pieces.exitsByVersion == whole.exitsByVersion)
        #expect(pieces.exitsByDeviceAndOS == whole.exitsByDeviceAndOS)
        #expect(pieces.exitsByDay == whole.exitsByDay)
        #expect(!whole.signposts.isEmpty && !whole.handlers.isEmpty)
        #expect(pieces.signposts == whole.signposts)
        #expect(pieces.handlers == whole.handlers)
        #expect(whole.percentiles.contains { !$0.isEmpty })
        #expect(pieces.percentiles == whole.percentiles)
    }
}

extension PostgresAggregatorTests {
    @Test("a cell's buckets stay within 128 per source with exact sample counts when layouts differ")
    func bucketsCoarsenedWithExactCounts() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        defer { Task { await store.shutdown() } }
        // 100 + 100 distinct bounds in two folds into one cell: each fits, their merge does not.
        for offset in [0, 5] {
            let buckets = (0..<100).map { index in
                let start = offset + index * 10
                return "\"\(index)\": {\"bucketStart\": \"\(start) ms\", \"bucketEnd\": \"\(start + 10) ms\", "
                    + "\"bucketCount\": \(index + 1)}"
            }
            let json = """
                {"appVersion": "1.0", "timeStampBegin": "2026-10-01 00:00:00 +0000",
                 "timeStampEnd": "2026-10-01 23:59:00 +0000",
                 "metaData": {"appBuildVersion": "1", "osVersion": "iPhone OS 17.2 (21E131)",
                   "deviceType": "iPhone15,1", "bundleIdentifier": "\(Self.app)"},
                 "applicationLaunchMetrics": {"histogrammedTimeToFirstDrawKey": {
                   "histogramNumBuckets": 100, "histogramValue": {\(buckets.joined(separator: ", "))}}}}
                """
            let items = try IngestPipeline().prepare(
                body: ByteBuffer(string: json), encoding: .identity, family: .metric, app: Self.app, receivedAt: 0)
            _ = try await store.write(IngestRequest(app: Self.app, items: items))
            try await store.foldAll()
        }
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 12, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        for table in ["bucket_cells", "bucket_cells_v"] {
            let length = try await Self.count(
                "SELECT lengths[array_position(sources, '\(Self.launch)')] FROM \(table)", on: connection)
            #expect(length <= 128 && length >= 64, "\(table): \(length)")
        }
        let expected = Int64(2 * (100 * 101 / 2))
        let day: UTCDay = "2026-10-01"
        for groupBy in [[GroupDimension.version], [.os, .device]] {
            let scope = Scope(app: Self.app, days: DayRange(from: day, to: day), groupBy: groupBy)
            let rows = try await store.read { try await $0.buckets(scope, source: .metric(Self.launch)) }
            #expect(rows.map(\.count).reduce(0, +) == expected)
            #expect(rows.map(\.start).min() == 0)
            #expect(rows.map(\.end).max() == 1_005)
        }
    }
}
