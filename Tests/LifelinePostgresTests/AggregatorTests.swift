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
            "rollup_metrics", "rollup_metrics_by_version", "rollup_buckets", "rollup_buckets_by_version",
            "rollup_diagnostics", "rollup_diagnostics_by_version", "diagnostic_frames", "diagnostic_states",
            "diagnostics", "crash_groups", "payload_states", "state_exit_counts", "state_histograms",
            "state_signposts", "rollup_explorer", "rollup_explorer_by_version",
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

    @Test(
        "the explorer's rows and the version-level rollups are held across folds, written when a reader waits; a refold beside the writer neither loses nor doubles them"
    )
    func explorerRowsHeld() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let half = items.count / 2
        let expected = try await Self.folded(items).1
        let expectedHalf = try await Self.folded(Array(items[..<half])).1
        let sqlite = try TemporaryDatabase()
        func watermarks() throws -> (folded: Int64, explorer: Int64) { try Self.watermarks(sqlite) }
        func folded(_ writer: IngestWriter) async throws {
            while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        var options = IngestWriter.Options()
        options.explorerDelay = 3_600
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            try await Self.ingest(Array(items[..<half]), into: writer)
            try await folded(writer)
            // Folded into the rollups, the explorer's rows held in memory: its watermark is behind.
            let held = try watermarks()
            #expect(held.explorer < held.folded)
            let deviceDays = items[..<half].filter { $0.family == .metric && $0.isDeviceDay }.count
            #expect(deviceDays > 10)
            #expect(writer.statistics.aggregationExplorerHeldDocuments == deviceDays)
            #expect(try sqlite.database.query("SELECT count(*) FROM rollup_explorer_by_version")[0] == [.integer(0)])
            // A reader waits for them: written, and the answer is exact.
            #expect(try await PostgresStoreTests.Figures.read(sqlite.database) == expectedHalf)
            let written = try watermarks()
            #expect(written.explorer == written.folded)
            #expect(writer.statistics.aggregationExplorerHeldDocuments == 0)
            // The rest held, then refolded beside the writer: the refold writes them from the raw
            // copies, and the writer drops what it held instead of writing it a second time.
            try await Self.ingest(Array(items[half...]), into: writer)
            try await folded(writer)
            let heldAgain = try watermarks()
            #expect(heldAgain.explorer < heldAgain.folded)
            // In chunks of 5 documents: each chunk's rows are written once.
            _ = try sqlite.database.refold(chunk: 5)
            let refolded = try watermarks()
            #expect(refolded.explorer == refolded.folded)
            #expect(try await PostgresStoreTests.Figures.read(sqlite.database) == expected)
        }
        // Stopping writes nothing more; a later start folds nothing again.
        #expect(try await PostgresStoreTests.Figures.read(sqlite.database) == expected)
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            let again = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(again == expected)
            #expect(writer.statistics.foldedDocuments == 0)
        }
    }

    @Test(
        "held rows sealed by age are merged with the stored ones on the explorer's thread and written by a later fold, exactly as a refold writes them"
    )
    func sealedRowsPrepared() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let sqlite = try TemporaryDatabase()
        func watermarks() throws -> (folded: Int64, explorer: Int64) { try Self.watermarks(sqlite) }
        var options = IngestWriter.Options()
        options.explorerDelay = 0.02
        var caughtUp = 0
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            // Waves of documents into the same cells (every version row is shared): each wave's
            // rows are sealed after 20 ms, prepared by the worker against the rows the waves before
            // stored, and written by the writer's next turn. No reader waits meanwhile (the
            // watermarks are read directly), so nothing forces a write.
            for wave in stride(from: 0, to: items.count, by: max(1, items.count / 6)) {
                try await Self.ingest(
                    Array(items[wave..<min(items.count, wave + max(1, items.count / 6))]), into: writer)
                for _ in 0..<400 {
                    let marks = try watermarks()
                    if marks.explorer == marks.folded, writer.statistics.aggregationLagDocuments == 0 { break }
                    try await Task.sleep(for: .milliseconds(5))
                }
                let marks = try watermarks()
                if marks.explorer == marks.folded, marks.folded > 0 { caughtUp += 1 }
            }
        }
        #expect(caughtUp >= 5, "waves whose rows were written without a reader: \(caughtUp)")
        let written = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(!written.explorer.isEmpty)
        _ = try sqlite.database.refold()
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(written == refolded, "differ: \(Self.differences(written, refolded))")
    }

    @Test(
        "version rows and version-level rollups kept in memory between writes: a crash image replays the documents above their watermarks into the version level only, and answers exactly"
    )
    func versionRowsCached() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let expected = try await Self.folded(items).1
        let sqlite = try TemporaryDatabase()
        func marks() throws -> (explorer: Int64, version: Int64, rollups: Int64) {
            let row = try sqlite.database.query(
                "SELECT explorer_through, explorer_version_through, rollup_version_through FROM aggregation_state")[0]
            guard case .integer(let explorer) = row[0], case .integer(let version) = row[1],
                case .integer(let rollups) = row[2]
            else {
                throw StoreError(.internal, "no watermarks")
            }
            return (explorer, version, rollups)
        }
        var options = IngestWriter.Options()
        options.explorerDelay = 0.02
        options.explorerVersionDelay = 3_600
        let image = TemporaryDirectory()
        let offlineImage = TemporaryDirectory()
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            // Held rows are sealed after 20 ms and written once prepared; the version rows go to
            // the worker's cache, the version-level rollups to the rollup stage's (both written
            // after an hour here): their watermarks stay behind.
            try await Self.ingest(items, into: writer)
            while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(5)) }
            var written = try marks()
            for _ in 0..<400 {
                guard written.explorer < (try Self.watermarks(sqlite).folded) else { break }
                try await Task.sleep(for: .milliseconds(5))
                written = try marks()
            }
            let folded = try Self.watermarks(sqlite).folded
            #expect(written.explorer == folded)
            #expect(written.version < written.explorer)
            #expect(written.rollups < folded)
            #expect(writer.statistics.aggregationExplorerHeldDocuments > 0)
            // What a crash leaves: the committed state, the cache lost.
            try sqlite.database.execute("VACUUM INTO '\(image.databasePath)'")
            try sqlite.database.execute("VACUUM INTO '\(offlineImage.databasePath)'")
            // A reader waits: the cache is written, and the answer is exact.
            let read = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(read == expected, "differ: \(Self.differences(read, expected))")
            let after = try marks()
            #expect(after.version == after.explorer)
            #expect(after.rollups == (try Self.watermarks(sqlite).folded))
            #expect(writer.statistics.aggregationExplorerHeldDocuments == 0)
        }
        // The crash image starts, replays the documents above its version watermarks into the
        // version level only (their fine rows and cells are stored), and answers exactly: nothing
        // lost or doubled. Read offline (`lifeline report` folds what is pending first, without a
        // server), the same image answers the same.
        let offline = try offlineImage.openDatabase()
        #expect(try offline.foldPending() == 0)
        let offlineFigures = try await PostgresStoreTests.Figures.read(offline)
        #expect(offlineFigures == expected, "differ: \(Self.differences(offlineFigures, expected))")
        let restarted = try image.openDatabase()
        try await IngestWriter.withWriter(database: restarted, logger: PostgresStoreTests.quiet) { writer in
            let figures = try await PostgresStoreTests.Figures.read(restarted)
            #expect(figures == expected, "differ: \(Self.differences(figures, expected))")
            #expect(writer.statistics.foldedDocuments == 0)
        }
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
            #expect(row[6].text != "")
            let key = ([literal(row[5].text ?? "")] + row[0..<5].map { "\($0.integer ?? -1)" }).joined(separator: ", ")
            whole[key, default: ExplorerCellMap()].merge(try ExplorerCellMap(decoding: row[7].blob ?? []))
        }
        var sql = "DELETE FROM rollup_explorer; DELETE FROM rollup_explorer_by_version;"
        for (key, cells) in whole {
            sql += """
                INSERT INTO rollup_explorer (app_state, app, day, app_version, os_version, device_type, category, cells)
                VALUES (\(key), '', \(hex(cells.encoded())));
                """
        }
        var byVersion: [String: ExplorerCellMap] = [:]
        for row in try sqlite.database.query(
            "SELECT app, day, app_version, app_state, cells FROM rollup_explorer_by_version")
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
            SELECT (SELECT count(*) FROM rollup_explorer WHERE category = ''),
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
                "SELECT category, count(*) FROM rollup_explorer_by_version WHERE app_state = 'all' GROUP BY category")
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
