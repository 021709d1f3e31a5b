import LifelineIngest
import LifelinePostgres
import LifelineStorage
import Testing

/// A fold batch taken in parts (the leader's memory bound): each part's fine rows written, the
/// coarser rollup rows and the explorer's version-level rows carried to the batch's end.
@Suite("PostgreSQL fold in parts")
struct FoldPartsTests {
    @Test("one batch folded in parts of three documents answers every figure as one part of them all")
    func partsAnswerAsOneBatch() async throws {
        guard let parted = try await PostgresStoreTests.store(), let whole = try await PostgresStoreTests.store()
        else { return }
        // Metric and diagnostic documents, several devices per version and day: the version-level
        // rows of one part merge with those of the next.
        let items = try PostgresStoreTests.items(devices: 6, days: 2, seed: 43)
        #expect(items.contains { $0.family == .diagnostic })
        for store in [parted, whole] {
            for chunk in stride(from: 0, to: items.count, by: 7) {
                _ = try await store.write(
                    IngestRequest(
                        app: PostgresStoreTests.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
            }
        }
        let inParts = try await parted.foldOnce(limit: items.count, part: 3)
        let atOnce = try await whole.foldOnce(limit: items.count, part: items.count)
        #expect(inParts.folded == items.count && !inParts.more)
        #expect(atOnce.folded == items.count && !atOnce.more)
        let figures = try await PostgresStoreTests.Figures.read(parted)
        let expected = try await PostgresStoreTests.Figures.read(whole)
        #expect(!figures.explorer.isEmpty && figures.percentiles.contains { !$0.isEmpty })
        #expect(figures == expected, "differ: \(AggregatorTests.differences(figures, expected))")
        await parted.shutdown()
        await whole.shutdown()
    }
}
