import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

/// Shared data for the rollup and reader tests.
enum RollupFixtures {
    static let rollupTables = [
        "rollup_metrics", "rollup_diagnostics", "rollup_bucket_cells", "rollup_metrics_by_version",
        "rollup_buckets_by_version", "rollup_diagnostics_by_version",
    ]

    /// A metric payload with app time, on `device` and `os`.
    static func metric(
        version: String, day: Int, os: String = "iPhone OS 17.4 (21E219)", device: String = "iPhone15,2",
        foregroundSeconds: Double = 100, backgroundSeconds: Double = 50
    ) -> MetricPayload {
        var metric = Fixtures.metric(version: version, day: day)
        metric.meta.osVersion = os
        metric.meta.deviceType = device
        metric.scalars += [
            ScalarMetric(
                name: "applicationTimeMetrics.cumulativeForegroundTime",
                measurement: Fixtures.measurement(foregroundSeconds * 1_000, .milliseconds, "x sec")),
            ScalarMetric(
                name: "applicationTimeMetrics.cumulativeBackgroundTime",
                measurement: Fixtures.measurement(backgroundSeconds * 1_000, .milliseconds, "x sec")),
        ]
        return metric
    }

    /// Every rollup table's rows, in key order.
    static func snapshot(_ database: Database) throws -> [String: [[SQLValue]]] {
        var tables: [String: [[SQLValue]]] = [:]
        for table in rollupTables {
            let columns = try database.query("SELECT count(*) FROM pragma_table_info(?)", [.text(table)])
            let count = columns.first?.first?.integer ?? 1
            let order = (1...max(1, count)).map(String.init).joined(separator: ", ")
            tables[table] = try database.query("SELECT * FROM \(table) ORDER BY \(order)")
        }
        return tables
    }

    /// Sums the last column of `rows` per the values at `columns`, in ascending order of those
    /// values (integers and reals by value, text by code points), like `GROUP BY … ORDER BY …`.
    static func sums(_ rows: [[SQLValue]], by columns: [Int]) -> [[SQLValue]] {
        var totals: [[SQLValue]: Int64] = [:]
        for row in rows {
            guard case .integer(let count) = row.last else { continue }
            totals[columns.map { row[$0] }, default: 0] += count
        }
        func precedes(_ a: SQLValue, _ b: SQLValue) -> Bool {
            switch (a, b) {
            case (.integer(let x), .integer(let y)): x < y
            case (.real(let x), .real(let y)): x < y
            case (.text(let x), .text(let y)): x < y
            default: "\(a)" < "\(b)"
            }
        }
        return totals.sorted { lhs, rhs in
            for (a, b) in zip(lhs.key, rhs.key) where a != b { return precedes(a, b) }
            return false
        }.map { $0.key + [.integer($0.value)] }
    }

    /// Ingests a known mix: 3 metric payloads over two versions, two OSes and two days, a duplicate,
    /// a diagnostic payload, and a request rolled back by its savepoint (version `9.9.9`).
    static func ingestMix(into database: Database) async throws {
        let writer = try IngestWriter(database: database)
        let a = Fixtures.item(.metric(metric(version: "4.1.0", day: 21)), hashSeed: "a")
        let b = Fixtures.item(
            .metric(metric(version: "4.1.0", day: 22, os: "iPhone OS 18.0 (22A1)", foregroundSeconds: 10)),
            hashSeed: "b")
        let c = Fixtures.item(
            .metric(metric(version: "4.2.0", day: 22, device: "iPhone16,1", backgroundSeconds: 7)), hashSeed: "c")
        let crashes = Fixtures.item(
            .diagnostic(
                Fixtures.diagnosticPayload([
                    Fixtures.crash(version: "4.1.0", fingerprint: "aaaaaaaaaaaaaaaa"),
                    Fixtures.crash(version: "4.2.0", fingerprint: "aaaaaaaaaaaaaaaa"),
                    Fixtures.hang(version: "4.2.0"),
                ])), hashSeed: "d")
        var bad = Fixtures.item(.metric(metric(version: "9.9.9", day: 21)), hashSeed: "bad")
        bad.contentHash = [1, 2, 3]
        let good = Fixtures.item(.metric(metric(version: "9.9.9", day: 21)), hashSeed: "rolled-back")
        _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [a, b, a]))
        _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [c, crashes, b]))
        await #expect(throws: StoreError.self) {
            try await writer.submit(IngestRequest(app: Fixtures.app, items: [good, bad]))
        }
        _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [a, c, crashes]))
        await writer.shutdown()
    }
}

@Suite("Rollups")
struct RollupTests {
    @Test("rollups count every document once; duplicates and rolled-back requests are not counted")
    func rollupsEqualRawSums() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await RollupFixtures.ingestMix(into: database)
        #expect(try database.payloadCount(kind: .metric) == 3)
        #expect(try database.query("SELECT count(*) FROM app_versions WHERE value = '9.9.9'") == [[.integer(0)]])

        // The three distinct metric documents carry the same exit counts and signposts
        // (Fixtures.metric): each counted once, so the rollups hold three times each.
        func id(_ table: String, _ value: String) throws -> Int64 {
            try #require(
                database.query("SELECT id FROM \(table) WHERE value = ?", [.text(value)]).first?.first?.integer)
        }
        let fixture = Fixtures.metric()
        var expectedExits: [[SQLValue]] = []
        for exit in fixture.exits where exit.count > 0 {
            expectedExits.append([
                .integer(exit.state == .foreground ? 0 : 1), .integer(try id("exit_reasons", exit.reason)),
                .integer(exit.count * 3),
            ])
        }
        expectedExits.sort { ($0[0].integer ?? 0, $0[1].integer ?? 0) < ($1[0].integer ?? 0, $1[1].integer ?? 0) }
        var expectedSignposts: [[SQLValue]] = []
        for signpost in fixture.signposts {
            expectedSignposts.append([
                .integer(try id("signpost_categories", signpost.category)),
                .integer(try id("signpost_names", signpost.name)), .integer(signpost.totalCount * 3),
            ])
        }
        expectedSignposts.sort {
            ($0[0].integer ?? 0, $0[1].integer ?? 0) < ($1[0].integer ?? 0, $1[1].integer ?? 0)
        }
        for level in ["", "_by_version"] {
            #expect(
                try database.query(
                    "SELECT sum(payloads), total(foreground_ms), total(background_ms) FROM rollup_metrics\(level)")
                    == [[.integer(3), .real(210_000), .real(107_000)]])
            // Packed cells: (keys…, a, b, count); the fine level has 5 key columns, the version level 3.
            let keys = level.isEmpty ? 5 : 3
            #expect(
                try RollupFixtures.sums(
                    database.rollupEntries("rollup_metrics\(level)", "exits"), by: [keys, keys + 1]) == expectedExits)
            #expect(
                try RollupFixtures.sums(
                    database.rollupEntries("rollup_metrics\(level)", "signposts"), by: [keys, keys + 1])
                    == expectedSignposts)
            #expect(
                try database.query(
                    "SELECT kind, crash_group, sum(count) FROM rollup_diagnostics\(level) GROUP BY 1, 2 ORDER BY 1, 2")
                    == database.query(
                        "SELECT kind, crash_group, count(*) FROM diagnostics GROUP BY 1, 2 ORDER BY 1, 2"))
        }
        // Exits per version and day exactly: 4.1.0 has two payloads (days 21, 22), 4.2.0 one
        // (NormalApp 5, MemoryPressure 13, …). Version-level entries: (app, day, version, state, reason, count).
        let memoryPressure = try #require(
            database.query("SELECT id FROM exit_reasons WHERE value = 'MemoryPressure'").first?.first)
        let versions = try database.query("SELECT value, id FROM app_versions ORDER BY value")
        let name = Dictionary(uniqueKeysWithValues: versions.map { ($0[1], $0[0]) })
        let perVersion = try database.rollupEntries("rollup_metrics_by_version", "exits")
            .filter { $0[4] == memoryPressure }
            .map { [name[$0[2]] ?? .null, $0[3], $0[5]] }
            .sorted { "\($0)" < "\($1)" }
        #expect(
            perVersion == [
                [.text("4.1.0"), .integer(1), .integer(13)],
                [.text("4.1.0"), .integer(1), .integer(13)],
                [.text("4.2.0"), .integer(1), .integer(13)],
            ])
        // Buckets: the launch histogram (50 + 60 + 1 per payload) and the signpost durations (30 + 10).
        // Version-level bucket entries: (app, day, version, source, start, end, count).
        let sources = try database.query("SELECT id, value FROM metric_names")
        let source = Dictionary(uniqueKeysWithValues: sources.map { ($0[0], $0[1]) })
        let buckets = RollupFixtures.sums(
            try database.rollupEntries("rollup_buckets_by_version", "buckets").map {
                [source[$0[3]] ?? .null] + $0[4...]
            },
            by: [0, 1, 2])
        #expect(
            buckets == [
                [
                    .text("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"), .real(1_000), .real(1_010),
                    .integer(150),
                ],
                [
                    .text("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"), .real(1_010), .real(1_020),
                    .integer(180),
                ],
                [
                    .text("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"), .real(2_000), .real(2_000),
                    .integer(3),
                ],
                [.text("signpost:StateRestoration/RestoreAttempt"), .real(0), .real(10), .integer(90)],
                [.text("signpost:StateRestoration/RestoreAttempt"), .real(10), .real(20), .integer(30)],
            ])
        #expect(try database.integrityCheck() == "ok")
    }
}
