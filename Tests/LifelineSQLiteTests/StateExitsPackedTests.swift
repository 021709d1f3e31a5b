import LifelineAnalysis
import LifelineModel
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@testable import LifelineSQLite

@Suite("App states' exits and histograms packed (migrations 0027, 0030)")
struct StateExitsPackedTests {
    /// Two iOS 27 reports of one app and their two app states, as the tests' databases hold them.
    static let twoReports = [
        "INSERT INTO apps (id, bundle_id) VALUES (1, 'com.example.states')",
        """
        INSERT INTO payloads (id, app, kind, day, received_at_ms, content_hash, format)
        VALUES (1, 1, 'metric', '2026-10-01', 0, randomblob(32), 'v2'),
               (2, 1, 'metric', '2026-10-02', 0, randomblob(32), 'v2')
        """,
        "INSERT INTO app_state_values (id, domain, label) VALUES (1, 'screen', 'home'), (2, 'screen', 'feed')",
    ]
    /// The reports' state rows (the second report's second state has none).
    static let states =
        "INSERT INTO payload_states (payload, app_state, active_seconds) VALUES (1, 1, 3600), (1, 2, 100), (2, 1, 50)"

    /// A database in `temp` migrated below `version`, holding the two reports, their states and
    /// `rows`, then migrated to the latest version.
    static func migrated(from version: Int, rows: [String], in temp: TemporaryDirectory) throws -> Database {
        let database = try Database(path: temp.databasePath)
        try database.migrate(EmbeddedMigrations.all.filter { $0.version < version })
        for sql in twoReports + [states] + rows {
            try database.execute(sql)
        }
        try database.migrate()
        return database
    }

    @Test(
        "exit rows stored one per (state, reason) before migration 0027 are packed into their app states' rows, and the state queries answer the same sums"
    )
    func storedExitsPacked() throws {
        let temp = TemporaryDirectory()
        let database = try Self.migrated(
            from: 27,
            rows: [
                "INSERT INTO exit_reasons (id, value) VALUES (1, 'memoryResourceLimit'), (2, 'normalAppExit')",
                """
                INSERT INTO state_exit_counts (payload, app_state, state, reason, count)
                VALUES (1, 1, 0, 1, 3), (1, 1, 1, 2, 4), (1, 1, 0, 2, 1), (1, 2, 0, 1, 7), (2, 1, 1, 1, 2), (2, 2, 0, 2, 5)
                """,
            ], in: temp)
        #expect(
            try database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'state_exit_counts'") == [[.integer(0)]]
        )
        let rows = try database.query(
            "SELECT payload, app_state, active_seconds, exits FROM payload_states ORDER BY payload, app_state")
        func entries(_ value: SQLValue) -> [CountEntry] {
            guard case .blob(let bytes) = value else { return [] }
            return RollupBlob.decode(bytes, as: CountEntry.self)
        }
        #expect(
            rows.map { Array($0.prefix(3)) } == [
                [.integer(1), .integer(1), .real(3600)], [.integer(1), .integer(2), .real(100)],
                [.integer(2), .integer(1), .real(50)], [.integer(2), .integer(2), .null],
            ])
        #expect(
            rows.map { entries($0[3]) } == [
                [CountEntry(a: 0, b: 1, count: 3), CountEntry(a: 0, b: 2, count: 1), CountEntry(a: 1, b: 2, count: 4)],
                [CountEntry(a: 0, b: 1, count: 7)], [CountEntry(a: 1, b: 1, count: 2)],
                [CountEntry(a: 0, b: 2, count: 5)],
            ])
        // The state query sums the packed lists per group, in the order the exit rows' SQL sum gave.
        let scope = Scope(
            app: "com.example.states",
            days: DayRange(from: UTCDay(ordinal: 0) ?? .first, to: UTCDay(ordinal: 2_000_000) ?? .first))
        let reader = SQLiteRollupReader(
            connection: try database.openConnection(), names: DimensionNames(), symbols: nil)
        let answer = try reader.exits(scope.grouped(by: [.appState])).map {
            "\($0.key.appState?.label ?? "-") \($0.state) \($0.reason) \($0.count)"
        }
        #expect(
            answer == [
                "home foreground memoryResourceLimit 3", "home foreground normalAppExit 1",
                "home background memoryResourceLimit 2", "home background normalAppExit 4",
                "feed foreground memoryResourceLimit 7", "feed foreground normalAppExit 5",
            ])
    }

    @Test(
        "histogram rows stored one per (state, metric) before migration 0030 are packed into their app states' rows, and the state queries answer the same buckets"
    )
    func storedHistogramsPacked() throws {
        let temp = TemporaryDirectory()
        func hex(_ buckets: [HistogramBucket]) -> String {
            "X'" + HistogramCodec.encode(buckets).map { String(format: "%02x", $0) }.joined() + "'"
        }
        let fast = [HistogramBucket(start: 0, end: 100, count: 3), HistogramBucket(start: 100, end: 200, count: 1)]
        let slow = [HistogramBucket(start: 100, end: 200, count: 2), HistogramBucket(start: 250.5, end: 300, count: 4)]
        let database = try Self.migrated(
            from: 30,
            rows: [
                "INSERT INTO metric_names (id, value) VALUES (1, 'launch.timeToFirstDraw'), (2, 'hang.duration')",
                """
                INSERT INTO state_histograms (payload, app_state, metric, unit, total_count, buckets)
                VALUES (1, 1, 2, NULL, 6, \(hex(slow))), (1, 1, 1, NULL, 4, \(hex(fast))), (1, 2, 1, NULL, 6, \(hex(slow))),
                       (2, 1, 1, NULL, 6, \(hex(slow))), (2, 2, 2, NULL, 4, \(hex(fast)))
                """,
            ], in: temp)
        #expect(
            try database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'state_histograms'") == [[.integer(0)]]
        )
        // Each (payload, state) holds its metrics' lists as they were stored, taken by ll_cell_buckets.
        let packed = try database.query(
            """
            SELECT payload, app_state, active_seconds, ll_cell_buckets(histograms, 1), ll_cell_buckets(histograms, 2)
            FROM payload_states ORDER BY payload, app_state
            """)
        let (f, s) = (SQLValue.blob(HistogramCodec.encode(fast)), SQLValue.blob(HistogramCodec.encode(slow)))
        #expect(
            packed == [
                [.integer(1), .integer(1), .real(3600), f, s], [.integer(1), .integer(2), .real(100), s, .null],
                [.integer(2), .integer(1), .real(50), s, .null], [.integer(2), .integer(2), .null, .null, f],
            ])
        // The state query sums each state's buckets of one metric.
        let scope = Scope(
            app: "com.example.states",
            days: DayRange(from: UTCDay(ordinal: 0) ?? .first, to: UTCDay(ordinal: 2_000_000) ?? .first))
        let reader = SQLiteRollupReader(
            connection: try database.openConnection(), names: DimensionNames(), symbols: nil)
        let answer = try reader.buckets(scope.grouped(by: [.appState]), source: .metric("launch.timeToFirstDraw")).map {
            "\($0.key.appState?.label ?? "-") \($0.start)-\($0.end) \($0.count)"
        }
        #expect(
            Set(answer) == [
                "home 0.0-100.0 3", "home 100.0-200.0 3", "home 250.5-300.0 4", "feed 100.0-200.0 2",
                "feed 250.5-300.0 4",
            ])
        #expect(answer.count == 5)
    }
}
