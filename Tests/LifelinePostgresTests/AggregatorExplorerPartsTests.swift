import LifelineIngest
@testable import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

/// A seal's fine explorer rows written in parts (migration 0028): a busy writer writes one part per
/// fold, each part with a watermark of its own.
extension AggregatorTests {
    @Test(
        "the explorer's fine rows written one part per fold: crash images whose fine parts sit on different watermarks replay each document into the parts that miss it, and answer as a refold"
    )
    func explorerFinePartsReplayed() async throws {
        let items = try PostgresStoreTests.items(devices: 20, days: 3)
        let sqlite = try TemporaryDatabase()
        // The server's writer, driven fold by fold: held rows sealed at every fold, a seal's fine
        // rows written one part per fold, the version rows held for an hour.
        var deferral = ExplorerStage.Deferral()
        deferral.maxAge = .zero
        deferral.versionMaxAge = .seconds(3_600)
        deferral.versionMaxRows = 1 << 30
        deferral.cacheRowsPerFold = 0
        let writer = BatchWriter(
            connection: try sqlite.database.openConnection(),
            foldStages: DefaultStages.make(explorer: deferral, reader: try sqlite.database.openConnection()))
        defer { writer.close() }
        let explorer = try #require(writer.explorer)
        var images: [TemporaryDirectory] = []
        for start in stride(from: 0, to: items.count, by: 10) {
            let request = IngestRequest(app: Self.app, items: Array(items[start..<min(start + 10, items.count)]))
            #expect(writer.write([request]).committed)
            _ = try writer.fold(limit: 100)  // sealed
            explorer.worker.awaitPrepared()
            let written = try writer.fold(limit: 100)  // into the caches, and one fine part written
            // What a crash leaves: the committed state, the caches lost; kept when the fine parts'
            // watermarks differ.
            let image = TemporaryDirectory()
            try sqlite.database.execute("VACUUM INTO '\(image.databasePath)'")
            let marks = try image.openDatabase().query("SELECT DISTINCT through FROM rollup_watermarks WHERE level = 3")
            guard marks.count >= 2 else { continue }
            #expect(written.explorerHeld > 0, "a seal's documents are held until every part is written")
            images.append(image)
        }
        #expect(images.count >= 3)
        for image in images.suffix(3) {
            let database = try image.openDatabase()
            let lowest = try database.query(
                "SELECT explorer_through = (SELECT min(through) FROM rollup_watermarks WHERE level = 3) FROM aggregation_state"
            )
            #expect(lowest == [[.integer(1)]], "explorer_through is the lowest fine part's watermark")
            let started = try await IngestWriter.withWriter(database: database, logger: PostgresStoreTests.quiet) { _ in
                try await PostgresStoreTests.Figures.read(database)
            }
            #expect(!started.explorer.isEmpty)
            _ = try database.refold()
            let refolded = try await PostgresStoreTests.Figures.read(database)
            #expect(started == refolded, "differ: \(Self.differences(started, refolded))")
        }
    }
}
