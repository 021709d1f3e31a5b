import LifelineAnalysis
import LifelineIngest
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

/// The aggregator's held figures on SQLite: the explorer's rows held across folds, its sealed rows
/// prepared on its own thread, the version level (the explorer's rows and the rollups) and the fine
/// rollups kept in memory between writes, with what a reader, a refold and a crash see of them.
extension AggregatorTests {
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
        try await Self.expectAnswersAsRefolded(sqlite)
    }

    @Test(
        "a read of the rollups alone makes the writer write the held rollups, not the explorer's held rows: exact rollups, the explorer still held, an explorer read in it refused; an explorer read then writes them"
    )
    func rollupReadsLeaveTheExplorerHeld() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let expected = try await Self.folded(items).1
        let sqlite = try TemporaryDatabase()
        var options = IngestWriter.Options()
        options.explorerDelay = 3_600
        options.explorerVersionDelay = 3_600
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            try await Self.ingest(items, into: writer)
            let scope = Scope(app: Self.app, days: DayRange(from: "2026-09-25", to: "2026-10-20"))
            let (exits, usage, refused) = try await ReadFreshness.$readsExplorer.withValue(false) {
                try await AnalysisRunner(source: sqlite.database).analyze { analyzer in
                    let exits = try await analyzer.exits(scope.grouped(by: [.version]))
                    let usage = try await analyzer.usage(scope.grouped(by: [.device])).sorted { $0.key < $1.key }
                    var refused = false
                    do { _ = try await analyzer.reader.explorerCells(scope, metrics: []) } catch { refused = true }
                    return (exits, usage, refused)
                }
            }
            #expect(exits == expected.exitsByVersion)
            #expect(usage == expected.usage)
            #expect(refused)
            let row = try sqlite.database.query(
                "SELECT folded_through, explorer_through, rollup_fine_through, rollup_version_through FROM aggregation_state"
            )[0]
            #expect(row[0] == row[2] && row[0] == row[3], "rollups written through the fold: \(row)")
            #expect(row[1] != row[0], "the explorer's rows stayed held: \(row)")
            #expect(writer.statistics.aggregationExplorerHeldDocuments > 0)
            // A read of everything waits for the explorer's rows too: written, and exact.
            let read = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(read == expected, "differ: \(Self.differences(read, expected))")
            #expect(writer.statistics.aggregationExplorerHeldDocuments == 0)
            let after = try Self.watermarks(sqlite)
            #expect(after.explorer == after.folded)
        }
    }

    /// `database.explorer_version_rows` of the tests below: version rows sealed with the fine ones,
    /// or held unsealed until their part is sealed (the server's default holds 12,288).
    static let versionRowBounds = [0, 1_000_000]

    /// `explorerFineProbe` of the test below: the default (fine rows read, then written unread when
    /// few are stored), or 0 (every fine row written unread, the stored ones merged in SQL).
    static let fineProbes: [Int?] = [nil, 0]

    @Test(
        "cached version rows written on their own schedule while seals go on, with no reader, exactly as a refold writes them",
        arguments: versionRowBounds, fineProbes
    )
    func versionRowsWrittenByAge(versionRows: Int, fineProbe: Int?) async throws {
        var options = IngestWriter.Options()
        options.explorerVersionDelay = 0.15
        options.explorerVersionRows = versionRows
        options.explorerFineProbe = fineProbe
        try await Self.expectVersionRowsWrittenByAge(TemporaryDatabase(), options)
    }

    @Test(
        "the version rows' schedule comes from the database's options (database.explorer_version_seconds) when the writer is given none"
    )
    func versionRowsScheduleFromStorageOptions() async throws {
        var storage = Database.Options()
        storage.explorerVersionSeconds = 0.15
        storage.explorerVersionRows = 1_000_000
        try await Self.expectVersionRowsWrittenByAge(TemporaryDatabase(options: storage), IngestWriter.Options())
    }

    /// Ingests twelve waves into the same version rows with no reader: each wave's fine rows are
    /// sealed after 20 ms and their version rows merged into the worker's cache, which the writer
    /// writes when it is 150 ms old (as `options` or the database's options say), between seals.
    /// Expects at least two such writes, then answers exactly as a refold.
    static func expectVersionRowsWrittenByAge(_ sqlite: TemporaryDatabase, _ options: IngestWriter.Options)
        async throws
    {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        var options = options
        options.explorerDelay = 0.02
        var versionWrites = 0
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            var lastVersion: Int64 = 0
            let wave = max(1, items.count / 12)
            for start in stride(from: 0, to: items.count, by: wave) {
                try await Self.ingest(Array(items[start..<min(items.count, start + wave)]), into: writer)
                try await Task.sleep(for: .milliseconds(60))
                let row = try sqlite.database.query("SELECT explorer_version_through FROM aggregation_state")[0]
                if case .integer(let version) = row[0], version > lastVersion {
                    versionWrites += 1
                    lastVersion = version
                }
            }
        }
        #expect(versionWrites >= 2, "version caches written without a reader: \(versionWrites)")
        try await Self.expectAnswersAsRefolded(sqlite)
    }

    @Test(
        "version rows and the rollups of both levels kept in memory between writes: a crash image replays the documents above each watermark into the level it stands for, and answers exactly",
        arguments: versionRowBounds
    )
    func versionRowsCached(versionRows: Int) async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let expected = try await Self.folded(items).1
        let sqlite = try TemporaryDatabase()
        func marks() throws -> (explorer: Int64, version: Int64, rollups: Int64, fine: Int64) {
            let row = try sqlite.database.query(
                """
                SELECT explorer_through, explorer_version_through, rollup_version_through, rollup_fine_through
                FROM aggregation_state
                """)[0]
            guard case .integer(let explorer) = row[0], case .integer(let version) = row[1],
                case .integer(let rollups) = row[2], case .integer(let fine) = row[3]
            else {
                throw StoreError(.internal, "no watermarks")
            }
            return (explorer, version, rollups, fine)
        }
        var options = IngestWriter.Options()
        options.explorerDelay = 0.02
        options.explorerVersionDelay = 3_600
        options.explorerVersionRows = versionRows
        let image = TemporaryDirectory()
        let offlineImage = TemporaryDirectory()
        let oneLevelImages = [TemporaryDirectory(), TemporaryDirectory()]
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            // Held rows are sealed after 20 ms and written once prepared; the version rows go to
            // the worker's cache, the rollups of both levels to the rollup stage's (all written
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
            #expect(written.fine == written.rollups)
            #expect(try sqlite.database.query("SELECT count(*) FROM rollup_metrics")[0] == [.integer(0)])
            #expect(writer.statistics.aggregationExplorerHeldDocuments > 0)
            // What a crash leaves: the committed state, the cache lost.
            for copy in [image, offlineImage] + oneLevelImages {
                try sqlite.database.execute("VACUUM INTO '\(copy.databasePath)'")
            }
            // A reader waits: the cache is written, and the answer is exact.
            let read = try await PostgresStoreTests.Figures.read(sqlite.database)
            #expect(read == expected, "differ: \(Self.differences(read, expected))")
            let after = try marks()
            #expect(after.version == after.explorer)
            #expect(after.rollups == (try Self.watermarks(sqlite).folded))
            #expect(after.fine == after.rollups)
            #expect(writer.statistics.aggregationExplorerHeldDocuments == 0)
        }
        // One level whole, the other behind: what a crash leaves between the two writes of a busy
        // server (one level per fold), or a server of before migration 0024 (fine cells whole).
        // Only the level behind is replayed: replaying both would count the other twice.
        let levels = [
            (["rollup_metrics", "rollup_bucket_cells", "rollup_diagnostics"], "rollup_fine_through", 0),
            (
                ["rollup_metrics_by_version", "rollup_buckets_by_version", "rollup_diagnostics_by_version"],
                "rollup_version_through", 1
            ),
        ]
        for ((tables, watermark, level), copy) in zip(levels, oneLevelImages) {
            let partial = try copy.openDatabase()
            let copies = tables.map { "DELETE FROM \($0); INSERT INTO \($0) SELECT * FROM whole.\($0);" }
            try partial.execute(
                "ATTACH '\(sqlite.path)' AS whole; \(copies.joined()) DETACH whole; "
                    + "UPDATE aggregation_state SET \(watermark) = folded_through; "
                    + "UPDATE rollup_watermarks SET through = (SELECT folded_through FROM aggregation_state) "
                    + "WHERE level = \(level)")
            #expect(try partial.foldPending() == 0)
            let figures = try await PostgresStoreTests.Figures.read(partial)
            #expect(figures == expected, "\(watermark) whole, differ: \(Self.differences(figures, expected))")
        }
        // The crash image starts, replays the documents above its watermarks into the levels
        // that miss them (the fine rollups and the version level), and answers exactly: nothing
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

    /// What the server wrote (explorer rows among it) answers as a refold of the same documents.
    static func expectAnswersAsRefolded(_ sqlite: TemporaryDatabase) async throws {
        let written = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(!written.explorer.isEmpty)
        _ = try sqlite.database.refold()
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(written == refolded, "differ: \(Self.differences(written, refolded))")
    }
}
