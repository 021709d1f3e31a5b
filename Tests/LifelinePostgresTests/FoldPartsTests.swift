import LifelineIngest
import LifelinePostgres
import LifelineStorage
import PostgresNIO
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

    @Test("histogram and explorer rows of more cells than one statement takes are all written: answers as SQLite's")
    func bucketRowsInSeveralStatements() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try PostgresStoreTests.items(devices: 24, days: 16)
        for chunk in stride(from: 0, to: items.count, by: 7) {
            _ = try await store.write(
                IngestRequest(app: PostgresStoreTests.app, items: Array(items[chunk..<min(chunk + 7, items.count)])))
        }
        // One batch, one part: every cell's fine bucket row in the same flush, more cells than
        // the 256 one statement takes (`RollupRows.bucketCellsPerStatement`).
        let result = try await store.foldOnce(limit: items.count, part: items.count)
        #expect(result.folded == items.count)
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 6, logger: PostgresStoreTests.quiet)
        defer { Task { try? await connection.close() } }
        let cells = try await PostgresAggregatorTests.count("SELECT count(*) FROM bucket_cells", on: connection)
        #expect(cells > 256)
        // And more explorer rows than one statement pair merges (`ExplorerRows.flushChunk`, 512).
        let explorerRows = try await PostgresAggregatorTests.count(
            "SELECT count(*) FROM explorer_cells", on: connection)
        #expect(explorerRows > 512)
        let (_, expected) = try await AggregatorTests.folded(items)
        let actual = try await PostgresStoreTests.Figures.read(store)
        #expect(expected.percentiles.contains { !$0.isEmpty })
        #expect(actual.percentiles == expected.percentiles)
        #expect(actual.filteredPercentiles == expected.filteredPercentiles)
        #expect(actual.explorer == expected.explorer)
        await store.shutdown()
    }

    @Test("a diagnostic document whose rows fail is skipped, the others of its part folded (document by document)")
    func failingDiagnosticSkipped() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        let items = try PostgresStoreTests.items(devices: 4, days: 2, seed: 47)
        let diagnostics = items.filter { $0.family == .diagnostic }
        #expect(!diagnostics.isEmpty)
        _ = try await store.write(IngestRequest(app: PostgresStoreTests.app, items: items))
        // Every diagnostic row of the first diagnostic document fails to insert.
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 7, logger: PostgresStoreTests.quiet)
        defer { Task { try? await connection.close() } }
        let first = try await PostgresAggregatorTests.count(
            "SELECT min(id) FROM payloads WHERE kind = 'diagnostic'", on: connection)
        try await connection.query(
            """
            CREATE FUNCTION refuse_diagnostic() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.payload = \(first) THEN RAISE EXCEPTION 'refused'; END IF;
                RETURN NEW;
            END $$
            """, logger: PostgresStoreTests.quiet)
        try await connection.query(
            """
            CREATE TRIGGER refuse BEFORE INSERT ON diagnostics
            FOR EACH ROW EXECUTE FUNCTION refuse_diagnostic()
            """, logger: PostgresStoreTests.quiet)
        let result = try await store.foldOnce(limit: items.count, part: 5)
        #expect(result.folded == items.count && result.skipped == 1)
        let folded = try await PostgresAggregatorTests.count(
            "SELECT count(DISTINCT payload) FROM diagnostics", on: connection)
        #expect(folded == Int64(diagnostics.count - 1))
        #expect(try await PostgresAggregatorTests.deviceDays(store) > 0, "the metric documents were folded")
        await store.shutdown()
    }
}
