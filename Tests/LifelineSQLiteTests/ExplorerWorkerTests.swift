import Dispatch
import Foundation
import LifelineModel
@testable import LifelineSQLite
import LifelineStoreTestSupport
import Testing

@Suite("The explorer's worker threads")
struct ExplorerWorkerTests {
    @Test("documents handed over while sealed rows are prepared are added meanwhile, not queued behind the prepare")
    func addsGoOnDuringAPrepare() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // The prepare's end is held (its callback runs on the prepare's thread and waits), as a
        // long merge would hold it.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let worker = ExplorerWorker(reader: try database.openConnection()) {
            entered.signal()
            release.wait()
        }
        defer { worker.stop() }
        func document(_ version: String) -> ExplorerWorker.Document {
            let metric = Fixtures.metric(version: version)
            #expect(metric.isDeviceDay)
            return ExplorerWorker.Document(app: 1, day: 18_190, version: 1, os: 1, device: 1, metric: metric)
        }
        worker.submit(document("1.0"))
        worker.drain()
        let sealedRows = worker.heldRows
        #expect(sealedRows > 0)
        // Sealed on the documents' thread, prepared against the migrated file's watermarks (0, 0).
        #expect(worker.submitSealAndPrepare(base: 0, versionBase: 0))
        #expect(entered.wait(timeout: .now() + 5) == .success, "the prepare did not end")
        // The prepare's thread is held: documents handed over now are still added, more than the
        // queue holds, so none of the submits waits for the prepare (the writer's thread would).
        let submitted = DispatchSemaphore(value: 0)
        let later = (0..<ExplorerWorker.maxQueued * 3).map { _ in
            var other = document("2.0")
            other.version = 2
            return other
        }
        DispatchQueue.global().async {
            for other in later { worker.submit(other) }
            submitted.signal()
        }
        let added = submitted.wait(timeout: .now() + 10) == .success
        release.signal()
        #expect(added, "the submits waited behind the prepare")
        if !added { _ = submitted.wait(timeout: .now() + 10) }
        worker.drain()
        // The prepare wrote the sealed rows (new here: encoded as they are), and the rows held now
        // are the later documents' alone.
        let prepared = try #require(worker.prepared)
        #expect(prepared.count == sealedRows)
        #expect(worker.sealed.isEmpty)
        #expect(!worker.fine.isEmpty)
        #expect(worker.fine.keys.allSatisfy { $0.version == 2 })
        #expect(worker.byVersion.keys.allSatisfy { $0.version == 2 })
    }
}
