import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

/// The aggregator stage on SQLite: the door appends, the fold follows, answers are exact at any
/// moment, and the figures can be rebuilt from the raw documents.
@Suite("Aggregator")
struct AggregatorTests {
    static let app = PostgresStoreTests.app

    static func ingest(_ items: [IngestItem], into writer: IngestWriter, chunk: Int = 7) async throws {
        for start in stride(from: 0, to: items.count, by: chunk) {
            _ = try await writer.submit(
                IngestRequest(app: app, items: Array(items[start..<min(start + chunk, items.count)])))
        }
    }

    /// The fold's and the explorer's watermarks of a SQLite database.
    static func watermarks(_ sqlite: TemporaryDatabase) throws -> (folded: Int64, explorer: Int64) {
        let row = try sqlite.database.query("SELECT folded_through, explorer_through FROM aggregation_state")[0]
        guard case .integer(let folded) = row[0], case .integer(let explorer) = row[1] else {
            throw StoreError(.internal, "no watermarks")
        }
        return (folded, explorer)
    }

    /// A new database holding `items`, folded as the writer folds them, and its figures.
    static func folded(_ items: [IngestItem]) async throws -> (TemporaryDatabase, PostgresStoreTests.Figures) {
        let sqlite = try TemporaryDatabase()
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await ingest(items, into: writer)
        }
        return (sqlite, try await PostgresStoreTests.Figures.read(sqlite.database))
    }

    /// The names of the figures whose descriptions differ (for a readable failure message; a
    /// dictionary's order may differ too).
    static func differences(_ a: PostgresStoreTests.Figures, _ b: PostgresStoreTests.Figures) -> [String] {
        zip(Mirror(reflecting: a).children, Mirror(reflecting: b).children).compactMap { x, y in
            "\(x.value)" == "\(y.value)" ? nil : x.label
        }
    }

    @Test("a refold answers every figure exactly as the fold did, and a second refold changes nothing")
    func refoldReproducesEveryFigure() async throws {
        let items = try PostgresStoreTests.items(devices: 40, days: 4)
        let (sqlite, folded) = try await Self.folded(items)
        #expect(folded.apps.first?.metricPayloads ?? 0 > 100)
        #expect(!folded.crashes.isEmpty && !folded.handlers.isEmpty && !folded.exitsByAppState.isEmpty)

        let report = try sqlite.database.refold()
        let metrics = items.filter { $0.family == .metric }.count
        #expect(report.documents == metrics && report.unreadable == 0)
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(refolded == folded, "differ: \(Self.differences(refolded, folded))")

        // One app from a later day: the days before it are left alone, the others rebuilt.
        let partial = try sqlite.database.refold(app: Self.app, from: UTCDay("2026-10-03"))
        #expect(partial.firstDays == [Self.app: "2026-10-03"])
        #expect(partial.documents > 0 && partial.documents < metrics)
        let again = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(again == folded, "differ: \(Self.differences(again, folded))")
        #expect(try sqlite.database.integrityCheck() == "ok")
    }

    /// Folds the second half of `items` into `sqlite` (a migrated database holding the first half,
    /// folded) and checks that every figure equals `expected`, one fold of them all: later folds
    /// merge into what a migration converted.
    static func foldRest(
        _ items: [IngestItem], into sqlite: TemporaryDatabase, expecting expected: PostgresStoreTests.Figures
    ) async throws {
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await ingest(Array(items.dropFirst(items.count / 2)), into: writer)
        }
        let actual = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(actual == expected, "differ: \(differences(actual, expected))")
        #expect(try sqlite.database.integrityCheck() == "ok")
    }

    @Test("migration 0021 packs an older database's fine buckets per cell: every figure unchanged, later folds merge")
    func fineBucketsPackedByMigration() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let (_, expected) = try await Self.folded(items)
        let (sqlite, _) = try await Self.folded(Array(items.prefix(items.count / 2)))
        let packed = try sqlite.database.rollupEntries("rollup_bucket_cells", "sources")
        #expect(packed.count > 100)
        // The database as migration 0020 left it: one rollup_buckets row per fine cell and source.
        try sqlite.database.execute(
            """
            CREATE TABLE rollup_buckets (
                app INTEGER NOT NULL, day INTEGER NOT NULL, app_version INTEGER NOT NULL,
                os_version INTEGER NOT NULL, device_type INTEGER NOT NULL, source INTEGER NOT NULL,
                buckets BLOB NOT NULL, PRIMARY KEY (app, day, app_version, os_version, device_type, source)
            ) WITHOUT ROWID;
            INSERT INTO rollup_buckets
            SELECT c.app, c.day, c.app_version, c.os_version, c.device_type, n.id, ll_cell_buckets(c.sources, n.id)
            FROM rollup_bucket_cells c CROSS JOIN metric_names n WHERE ll_cell_buckets(c.sources, n.id) IS NOT NULL;
            DROP TABLE rollup_bucket_cells;
            DELETE FROM schema_migrations WHERE version = 21;
            """)
        let perSource = try sqlite.database.rollupEntries("rollup_buckets", "buckets")
        #expect(perSource == packed)
        #expect(try sqlite.database.migrate().map(\.version) == [21])
        #expect(try sqlite.database.rollupEntries("rollup_bucket_cells", "sources") == packed)
        #expect(
            try sqlite.database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'rollup_buckets'") == [
                [.integer(0)]
            ])
        try await Self.foldRest(items, into: sqlite, expecting: expected)
    }

    @Test(
        "migrations 0022 and 0029 name an older database's explorer states and categories by id: every figure unchanged, later folds merge"
    )
    func explorerStatesNumberedByMigration() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let (_, expected) = try await Self.folded(items)
        let (sqlite, before) = try await Self.folded(Array(items.prefix(items.count / 2)))
        #expect(!before.exitsByAppState.isEmpty)
        let rows = "SELECT count(*), count(DISTINCT app_state) FROM"
        let counts = try sqlite.database.query("\(rows) rollup_explorer UNION ALL \(rows) rollup_explorer_by_version")
        #expect(counts.allSatisfy { ($0[1].integer ?? 0) > 1 })
        // The database as migration 0021 left it: each row's app state and category as its text.
        var sql = ""
        for table in ["rollup_explorer", "rollup_explorer_by_version"] {
            sql += """
                CREATE TABLE \(table)_text AS SELECT * FROM \(table);
                UPDATE \(table)_text SET app_state = (SELECT state FROM explorer_states WHERE id = app_state),
                    category = (SELECT c.category FROM explorer_categories c WHERE c.id = \(table)_text.category);
                DELETE FROM \(table);
                DROP INDEX \(table == "rollup_explorer" ? "rollup_explorer_cell" : "rollup_explorer_by_version_cell");
                INSERT INTO \(table) SELECT * FROM \(table)_text;
                DROP TABLE \(table)_text;
                """
        }
        try sqlite.database.execute(
            sql + """
                DROP TABLE explorer_states;
                DROP TABLE explorer_categories;
                DELETE FROM schema_migrations WHERE version IN (22, 29);
                """)
        #expect(
            try sqlite.database.query("SELECT typeof(app_state), typeof(category) FROM rollup_explorer LIMIT 1") == [
                [.text("text"), .text("text")]
            ])
        #expect(try sqlite.database.migrate().map(\.version) == [22, 29])
        #expect(
            try sqlite.database.query("\(rows) rollup_explorer UNION ALL \(rows) rollup_explorer_by_version") == counts)
        #expect(
            try sqlite.database.query(
                """
                SELECT DISTINCT typeof(app_state), typeof(category) FROM rollup_explorer
                UNION SELECT typeof(app_state), typeof(category) FROM rollup_explorer_by_version
                """) == [[.text("integer"), .text("integer")]])
        #expect(
            try sqlite.database.query("SELECT id FROM explorer_categories WHERE category IN ('launch', 'termination')")
                == [[.integer(1)], [.integer(7)]])
        #expect(try sqlite.database.query("SELECT state FROM explorer_states WHERE id = 0") == [[.text("all")]])
        let migrated = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(migrated == before, "differ: \(Self.differences(migrated, before))")
        try await Self.foldRest(items, into: sqlite, expecting: expected)
    }

    @Test("an answer never lags an acknowledgement: post and read in a tight loop")
    func answersNeverLag() async throws {
        let items = try PostgresStoreTests.items(devices: 30, days: 2).filter { item in
            item.family == .metric && item.isDeviceDay
        }
        #expect(items.count >= 40)
        let sqlite = try TemporaryDatabase()
        let runner = AnalysisRunner(source: sqlite.database)
        let scope = Scope(app: Self.app, days: DayRange(from: "2026-09-01", to: "2026-11-30"))
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            for (index, item) in items.enumerated() {
                let outcome = try await writer.submit(IngestRequest(app: Self.app, items: [item]))
                #expect(outcome.accepted == 1)
                let deviceDays = try await runner.analyze { try await $0.usage(scope).map(\.payloads).reduce(0, +) }
                #expect(deviceDays == Int64(index + 1), "after \(index + 1) acknowledgements")
                if deviceDays != Int64(index + 1) { break }
            }
            let statistics = writer.statistics
            #expect(statistics.foldedDocuments == items.count)
            #expect(statistics.aggregationLagDocuments == 0)
        }
    }

    @Test("documents acknowledged but never folded are folded from their raw copies at the next start, once")
    func backlogFoldedAtStart() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let reference = try TemporaryDatabase()
        try await IngestWriter.withWriter(database: reference.database, logger: PostgresStoreTests.quiet) { writer in
            try await Self.ingest(items, into: writer)
        }
        let expected = try await PostgresStoreTests.Figures.read(reference.database)

        // The same documents on a database whose aggregator never ran: as after a kill -9
        // between the door's commit and the fold's. The watermark is put back to 0 and the
        // derived rows emptied, which is what such a database holds.
        let sqlite = try TemporaryDatabase()
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await Self.ingest(items, into: writer)
        }
        for table in [
            "rollup_metrics", "rollup_metrics_by_version", "rollup_bucket_cells", "rollup_buckets_by_version",
            "rollup_diagnostics", "rollup_diagnostics_by_version", "diagnostic_frames", "diagnostic_states",
            "diagnostics", "crash_groups", "payload_states", "state_signposts", "rollup_explorer",
            "rollup_explorer_by_version",
        ] {
            try sqlite.database.execute("DELETE FROM \(table)")
        }
        try sqlite.database.execute("UPDATE aggregation_state SET folded_through = 0")
        // A new writer folds the backlog; a read waits for it.
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            let actual = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(actual == expected)
            #expect(writer.statistics.foldedDocuments == items.count)
        }
        // Nothing is folded twice by a later start.
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            let again = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(again == expected)
            #expect(writer.statistics.foldedDocuments == 0)
        }
        let pending = try sqlite.database.foldPending()
        #expect(pending == 0)
    }

    @Test("explorer cells of the layouts before migration 0016 answer as before, and a refold rewrites them")
    func explorerLayoutsBefore0016() async throws {
        let items = try PostgresStoreTests.items(devices: 30, days: 3)
        let (sqlite, folded) = try await Self.folded(items)
        #expect(!folded.explorer.isEmpty)

        // What a database upgraded from 0015 holds: a fine row per device-day cell with every
        // category (category ''), and one version row per metric in the renamed 0014 table.
        func hex(_ bytes: [UInt8]) -> String { "X'" + bytes.map { String(format: "%02x", $0) }.joined() + "'" }
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var whole: [String: ExplorerCellMap] = [:]
        for row in try sqlite.database.query(
            "SELECT app, day, app_version, os_version, device_type, app_state, category, cells FROM rollup_explorer")
        {
            #expect(row[6].integer != nil)
            let key = row[5...5].map { "\($0.integer ?? -1)" } + row[0..<5].map { "\($0.integer ?? -1)" }
            let joined = key.joined(separator: ", ")
            whole[joined, default: ExplorerCellMap()].merge(try ExplorerCellMap(decoding: row[7].blob ?? []))
        }
        // Their category '' has an id as migration 0029 gives it one (after the catalog's).
        var sql = """
            DELETE FROM rollup_explorer; DELETE FROM rollup_explorer_by_version;
            INSERT INTO explorer_categories (category) VALUES ('');
            """
        for (key, cells) in whole {
            sql += """
                INSERT INTO rollup_explorer (app_state, app, day, app_version, os_version, device_type, category, cells)
                VALUES (\(key), (SELECT id FROM explorer_categories WHERE category = ''), \(hex(cells.encoded())));
                """
        }
        var byVersion: [String: ExplorerCellMap] = [:]
        // The version rows name their states by id (explorer_states, migration 0022); the 0014 table
        // by their text.
        for row in try sqlite.database.query(
            """
            SELECT e.app, e.day, e.app_version, s.state, e.cells
            FROM rollup_explorer_by_version e JOIN explorer_states s ON s.id = e.app_state
            """)
        {
            let key = (row[0..<3].map { "\($0.integer ?? -1)" } + [literal(row[3].text ?? "")]).joined(separator: ", ")
            byVersion[key, default: ExplorerCellMap()].merge(try ExplorerCellMap(decoding: row[4].blob ?? []))
        }
        var legacyRows = 0
        for (key, cells) in byVersion {
            for (entry, cell) in cells.cells {
                legacyRows += 1
                sql += """
                    INSERT INTO rollup_explorer_by_version_0014 (app, day, app_version, app_state, metric, subject, cell)
                    VALUES (\(key), \(literal(entry.metric)), \(literal(entry.subject)), \(hex(cell.encoded())));
                    """
            }
        }
        try sqlite.database.execute(sql)
        #expect(legacyRows > whole.count)
        let upgraded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(upgraded.explorer == folded.explorer)
        #expect(upgraded.insights == folded.insights)

        _ = try sqlite.database.refold()
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(refolded == folded, "differ: \(Self.differences(refolded, folded))")
        let left = try sqlite.database.query(
            """
            SELECT (SELECT count(*) FROM rollup_explorer WHERE category = (SELECT id FROM explorer_categories WHERE category = '')),
                (SELECT count(*) FROM rollup_explorer_by_version_0014), (SELECT count(*) FROM rollup_explorer_by_version)
            """
        ).first?.map { $0.integer ?? -1 }
        #expect(left?.prefix(2) == [0, 0] && (left?[2] ?? 0) > 0)
    }

    @Test("the explorer's fold keeps one row per key and category, merged at each fold, as a refold does")
    func explorerRowsMergedAtEachFold() async throws {
        // Twenty device-days of one version and day, one fold each: every category they hold has
        // one version-level row, merged twenty times.
        let metrics = try PostgresStoreTests.items(devices: 60, days: 2).filter {
            $0.family == .metric && $0.isDeviceDay
        }
        let byVersionAndDay = Dictionary(grouping: metrics) { item in
            guard case .metric(let metric) = item.document.content else { return "" }
            return "\(metric.meta.appVersion ?? "") \(item.day.string)"
        }
        let documents = Array(try #require(byVersionAndDay.values.max { $0.count < $1.count }).prefix(20))
        #expect(documents.count == 20)
        var categories = Set<String>()
        for item in documents {
            guard case .metric(let metric) = item.document.content else { continue }
            for observation in ExplorerExtractor.extract(metric).observations
            where observation.appState == ExplorerExtractor.overallState {
                categories.insert(String(ExplorerCatalog.categoryKey(ofMetric: observation.metric)))
            }
        }
        let expected = Dictionary(uniqueKeysWithValues: categories.map { ($0, 1) })
        #expect(expected.count >= 5)

        let sqlite = try TemporaryDatabase()
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            for document in documents {  // one fold each
                _ = try await writer.submit(IngestRequest(app: Self.app, items: [document]))
                try await writer.waitForFold()
            }
        }
        func rowsPerCategory() throws -> [String: Int] {
            var rows: [String: Int] = [:]
            for row in try sqlite.database.query(
                """
                SELECT c.category, count(*) FROM rollup_explorer_by_version e JOIN explorer_categories c ON c.id = e.category
                WHERE e.app_state = 0 GROUP BY c.category
                """)
            {
                rows[row[0].text ?? ""] = Int(row[1].integer ?? 0)
            }
            return rows
        }
        #expect(try rowsPerCategory() == expected)
        let folded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(folded.explorer.count > 20)

        // A refold folds the twenty in one batch: the same rows, the same answers.
        _ = try sqlite.database.refold()
        #expect(try rowsPerCategory() == expected)
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(refolded == folded, "differ: \(Self.differences(refolded, folded))")
    }
}
