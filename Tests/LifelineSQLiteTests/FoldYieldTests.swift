import LifelineIngest
@testable import LifelineSQLite
import LifelineStoreTestSupport
import Testing

@Suite("A fold's writes spread over folds")
struct FoldYieldTests {
    @Test(
        "a rollup part due by age waits for the next fold when the explorer wrote many rows in this one, unless it is late",
        arguments: [(Duration.seconds(3_600), false), (.zero, true)])
    func rollupPartYieldsToExplorerRows(lateness: Duration, written: Bool) throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // The explorer without a deferral writes its rows at every fold; every rollup part is due
        // at once, and one explorer row is "many".
        let explorer = ExplorerStage()
        let rollups = RollupStage(
            deferral: RollupStage.Deferral(maxAge: .zero, maxCells: 1 << 30, yieldRows: 1, yieldLateness: lateness))
        rollups.yieldsTo = explorer
        let writer = BatchWriter(connection: try database.openConnection(), foldStages: [explorer, rollups])
        defer { writer.close() }
        let request = IngestRequest(
            app: Fixtures.app, items: [Fixtures.item(.metric(Fixtures.metric()), hashSeed: "a")])
        #expect(writer.write([request]).committed)
        #expect(try writer.fold(limit: 10).folded == 1)
        #expect(explorer.rowWriter.rowsWritten > 0)
        func movedParts() throws -> Int64 {
            try writer.connection.first("SELECT count(*) FROM rollup_watermarks WHERE level < 2 AND through > 0") {
                $0.int64(0)
            } ?? -1
        }
        let moved = try movedParts()
        #expect(written ? moved > 0 : moved == 0)
        // The next fold, whose explorer wrote nothing new, writes it.
        #expect(try writer.fold(limit: 10).folded == 0)
        #expect(explorer.rowWriter.rowsWritten == 0)
        #expect(try movedParts() > moved || written)
    }
}
