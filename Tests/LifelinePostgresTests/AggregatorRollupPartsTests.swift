import LifelineAnalysis
import LifelineIngest
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

/// The rollups written in parts (migration 0025): a busy writer writes one part of one level per
/// fold, each part with a watermark of its own.
extension AggregatorTests {
    @Test(
        "the rollups written one part per fold: crash images whose parts sit on different watermarks replay each document into the parts that miss it, and answer as a refold"
    )
    func rollupPartsReplayed() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let sqlite = try TemporaryDatabase()
        var options = IngestWriter.Options()
        options.explorerDelay = 0.01
        // Nothing falls due by age; past one cached cell a fold writes the largest part, one per
        // fold: the parts' watermarks part ways.
        options.explorerVersionDelay = 3_600
        options.rollupMaxCells = 1
        var images: [TemporaryDirectory] = []
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            let chunks = Array(stride(from: 0, to: items.count, by: 7))
            for (number, start) in chunks.enumerated() {
                _ = try await writer.submit(
                    IngestRequest(app: Self.app, items: Array(items[start..<min(start + 7, items.count)])))
                // Three images from a third of the way on (before the writer stops and writes
                // every part), each one whose parts' watermarks part ways: while few version-days
                // have cells, the folds between two chunks can write them all, and the parts
                // without cells move with them.
                guard images.count < 3, (number + 1) * 3 >= (images.count + 1) * chunks.count else { continue }
                while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(2)) }
                // What a crash leaves: the committed state, the cached parts lost.
                let image = TemporaryDirectory()
                try sqlite.database.execute("VACUUM INTO '\(image.databasePath)'")
                let marks = try image.openDatabase().query(
                    "SELECT DISTINCT through FROM rollup_watermarks WHERE level < 2")
                if marks.count >= 2 { images.append(image) }
            }
        }
        #expect(images.count >= 2)
        for image in images {
            let database = try image.openDatabase()
            let marks = try database.query("SELECT level, part, through FROM rollup_watermarks WHERE level < 2")
            #expect(marks.count == 16)
            #expect(Set(marks.map { $0[2] }).count >= 2, "\(marks)")
            let lowest = try database.query(
                "SELECT rollup_fine_through, rollup_version_through FROM aggregation_state")[0]
            let lowestOfParts = try database.query(
                """
                SELECT min(through) FILTER (WHERE level = 0), min(through) FILTER (WHERE level = 1)
                FROM rollup_watermarks
                """
            )[0]
            #expect(lowest == lowestOfParts)
            // Started: the documents above each part's watermark are replayed into it alone.
            let started = try await IngestWriter.withWriter(database: database, logger: PostgresStoreTests.quiet) { _ in
                try await PostgresStoreTests.Figures.read(database)
            }
            #expect(!started.exitsByVersion.isEmpty)
            _ = try database.refold()
            let refolded = try await PostgresStoreTests.Figures.read(database)
            #expect(started == refolded, "differ: \(Self.differences(started, refolded))")
        }
    }

    @Test(
        "one part of a level rebuilt alone: its rows deleted and its watermark put back to 0, a restart replays every document of that part into it and no other (fine and version rollups, the explorer's version and fine rows)",
        arguments: [
            (0, ["rollup_metrics", "rollup_bucket_cells", "rollup_diagnostics"]),
            (1, ["rollup_metrics_by_version", "rollup_buckets_by_version", "rollup_diagnostics_by_version"]),
            (2, ["rollup_explorer_by_version"]),
            (3, ["rollup_explorer"]),
        ]
    )
    func partRebuiltAlone(level: Int, tables: [String]) async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let (sqlite, expected) = try await Self.folded(items)
        let column = ["rollup_fine_through", "rollup_version_through", "explorer_version_through", "explorer_through"][
            level]
        let database = sqlite.database
        // The version-days of the tables, and the part with the most of them.
        var keys: [Int: Set<[Int64]>] = [:]
        for table in tables {
            for row in try database.query("SELECT DISTINCT app, day, app_version FROM \(table)") {
                guard case .integer(let app) = row[0], case .integer(let day) = row[1],
                    case .integer(let version) = row[2]
                else { continue }
                keys[RollupParts.part(app: app, day: day, version: version), default: []].insert([app, day, version])
            }
        }
        let part = try #require(keys.max { $0.value.count < $1.value.count }?.key)
        #expect(keys.count > 1, "rows in several parts")
        for table in tables {
            for key in keys[part] ?? [] {
                try database.execute(
                    "DELETE FROM \(table) WHERE app = \(key[0]) AND day = \(key[1]) AND app_version = \(key[2])")
            }
        }
        try database.execute(
            """
            UPDATE rollup_watermarks SET through = 0 WHERE level = \(level) AND part = \(part);
            UPDATE aggregation_state SET \(column) = 0;
            """)
        let rebuilt = try await IngestWriter.withWriter(database: database, logger: PostgresStoreTests.quiet) { _ in
            try await PostgresStoreTests.Figures.read(database)
        }
        #expect(rebuilt == expected, "differ: \(Self.differences(rebuilt, expected))")
        let after = try database.query("SELECT min(through), max(through) FROM rollup_watermarks")[0]
        #expect(after[0] == after[1], "every part written through the fold: \(after)")
    }
}

extension AggregatorTests {
    /// The device-days of `metric` at the version level (`grouped(by: [.version])`) and at the fine
    /// level (`[.device, .os]`), each read as a reader of the explorer reads them.
    static func deviceDays(_ database: Database, metric: String) async throws -> (fine: UInt64, version: UInt64) {
        try await AnalysisRunner(source: database).analyze { analyzer in
            let scope = Scope(app: app, days: DayRange(from: "2026-09-25", to: "2026-10-20"))
            // The fine level first: whatever a fold writes between the two reads adds to the second.
            let fine = try await analyzer.explorer(scope.grouped(by: [.device, .os]), minimumDeviceDays: 1)
            let version = try await analyzer.explorer(scope.grouped(by: [.version]), minimumDeviceDays: 1)
            func total(_ rows: [ExplorerRow]) -> UInt64 {
                rows.filter { $0.metric == metric && $0.appState == nil }.reduce(0) { $0 + $1.deviceDays }
            }
            return (total(fine), total(version))
        }
    }

    @Test(
        "while the version cache is written in parts beside a busy door and seals of fine rows, a reader of the explorer never finds a document in the fine rows and not in the version rows"
    )
    func versionCacheWriteNeverHidesHeldRows() async throws {
        let items = try PostgresStoreTests.items(devices: 40, days: 3)
        let sqlite = try TemporaryDatabase()
        var options = IngestWriter.Options()
        // Seals every few milliseconds, a version part due every 2.5 ms (20 ms ÷ 8): seals of
        // version parts and the writes of their cached rows overlap seals of fine rows all along.
        options.explorerDelay = 0.005
        options.explorerVersionDelay = 0.02
        let metric = "memory.peak"
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            // Bursts of requests from four tasks, each followed by a pause of 0-45 ms (the cache's
            // write and the seals go on, then the writer idles) and a read.
            var checked = 0
            for (round, burst) in stride(from: 0, to: items.count, by: 8).enumerated() {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for lane in 0..<4 {
                        group.addTask {
                            for start in stride(from: burst + lane * 2, to: min(burst + 8, items.count), by: 8) {
                                _ = try await writer.submit(
                                    IngestRequest(
                                        app: Self.app, items: Array(items[start..<min(start + 2, items.count)])))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                try await Task.sleep(for: .milliseconds(round % 4 * 15))
                let days = try await Self.deviceDays(sqlite.database, metric: metric)
                #expect(days.version >= days.fine, "\(days)")
                checked += 1
            }
            #expect(checked > 10)
        }
        let days = try await Self.deviceDays(sqlite.database, metric: metric)
        #expect(days.fine > 0 && days.version == days.fine, "\(days)")
    }
}
