import LifelineStorage
import LifelineStoreTestSupport
import Testing

@testable import LifelineSQLite

@Suite("The fine rollups as rowid tables with a unique index on their cell (migration 0032)")
struct FineRollupsByRowidTests {
    @Test("migration 0032 keeps every fine metrics and bucket cell row, and an upsert still merges into its cell")
    func rowsKeptAndMerged() throws {
        let temp = TemporaryDirectory()
        let counts = RollupBlob.encode([CountEntry(a: 0, b: 1, count: 3)])
        let database = try StateExitsPackedTests.migrated(
            from: 32,
            rows: [
                """
                INSERT INTO rollup_metrics (app, day, app_version, os_version, device_type, payloads, foreground_ms,
                    background_ms, exits, signposts)
                VALUES (1, 20000, 1, 2, 3, 4, 10.5, 2.5, x'\(Self.hex(counts))', x''),
                       (1, 20001, 1, 2, 3, 1, 1.0, 0.0, x'', x'')
                """,
                """
                INSERT INTO rollup_bucket_cells (app, day, app_version, os_version, device_type, sources)
                VALUES (1, 20000, 1, 2, 3, x'0102'), (1, 20000, 1, 2, 4, x'0304')
                """,
            ], in: temp)
        #expect(
            try database.query(
                "SELECT app, day, app_version, os_version, device_type, payloads, foreground_ms FROM rollup_metrics ORDER BY day"
            ) == [
                [.integer(1), .integer(20000), .integer(1), .integer(2), .integer(3), .integer(4), .real(10.5)],
                [.integer(1), .integer(20001), .integer(1), .integer(2), .integer(3), .integer(1), .real(1.0)],
            ])
        #expect(
            try database.query("SELECT device_type, sources FROM rollup_bucket_cells ORDER BY device_type")
                == [[.integer(3), .blob([1, 2])], [.integer(4), .blob([3, 4])]])
        #expect(
            try database.query(
                "SELECT name FROM sqlite_schema WHERE name IN ('rollup_metrics_cell', 'rollup_bucket_cell') ORDER BY name"
            ) == [[.text("rollup_bucket_cell")], [.text("rollup_metrics_cell")]])
        // The fold's upsert finds the stored cell through the unique index and merges into it.
        try database.execute(
            """
            INSERT INTO rollup_metrics (app, day, app_version, os_version, device_type, payloads, foreground_ms,
                background_ms, exits, signposts)
            VALUES (1, 20000, 1, 2, 3, 2, 1.0, 1.0, x'\(Self.hex(counts))', x'')
            ON CONFLICT (app, day, app_version, os_version, device_type) DO UPDATE SET
                payloads = payloads + excluded.payloads, exits = ll_merge_counts(exits, excluded.exits)
            """)
        let merged = try database.query("SELECT payloads, exits FROM rollup_metrics WHERE day = 20000")
        #expect(merged.count == 1)
        #expect(merged.first?.first == .integer(6))
        guard case .blob(let exits) = merged.first?.last else {
            Issue.record("no exits blob")
            return
        }
        #expect(RollupBlob.decode(exits, as: CountEntry.self) == [CountEntry(a: 0, b: 1, count: 6)])
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
