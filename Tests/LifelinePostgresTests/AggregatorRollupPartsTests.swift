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
        let images = (0..<3).map { _ in TemporaryDirectory() }
        var taken = 0
        try await IngestWriter.withWriter(database: sqlite.database, options: options, logger: PostgresStoreTests.quiet)
        {
            writer in
            let chunks = Array(stride(from: 0, to: items.count, by: 7))
            for (number, start) in chunks.enumerated() {
                _ = try await writer.submit(
                    IngestRequest(app: Self.app, items: Array(items[start..<min(start + 7, items.count)])))
                // Three images: a third of the way, two thirds, at the end (before the writer
                // stops and writes every part).
                guard (number + 1) * images.count >= (taken + 1) * chunks.count else { continue }
                while writer.statistics.aggregationLagDocuments > 0 { try await Task.sleep(for: .milliseconds(2)) }
                // What a crash leaves: the committed state, the cached parts lost.
                try sqlite.database.execute("VACUUM INTO '\(images[taken].databasePath)'")
                taken += 1
            }
        }
        #expect(taken == images.count)
        for image in images {
            let database = try image.openDatabase()
            let marks = try database.query("SELECT level, part, through FROM rollup_watermarks")
            #expect(marks.count == 16)
            #expect(Set(marks.map { $0[2] }).count >= 2, "\(marks)")
            let lowest = try database.query(
                "SELECT rollup_fine_through, rollup_version_through FROM aggregation_state")[0]
            let lowestOfParts = try database.query(
                "SELECT min(through) FILTER (WHERE level = 0), min(through) FILTER (WHERE level = 1) FROM rollup_watermarks"
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
}
