import Dispatch
import Foundation
import LifelineAnalysis
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
        let sealedRows = worker.heldRows + worker.heldVersionRows
        #expect(worker.heldRows > 0 && worker.heldVersionRows > 0)
        // Sealed on the documents' thread, prepared against the migrated file's watermarks (0, 0).
        #expect(
            worker.submitSealAndPrepare(
                bases: .zero, through: 1, versionParts: Array(0..<8)))
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

    @Test(
        "a prepare leaves the rows it cannot merge sealed, for the writer's SQL merge: all of them on a moved watermark, the rest from a stored row that does not read"
    )
    func unpreparedRowsStaySealed() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let worker = ExplorerWorker(reader: try database.openConnection())
        defer { worker.stop() }
        for version in 1...3 {
            var document = ExplorerWorker.Document(
                app: 1, day: 18_190, version: Int64(version), os: 1, device: 1,
                metric: Fixtures.metric(version: "\(version).0"))
            document.os = Int64(version)
            worker.submit(document)
        }
        worker.drain()
        let fine = worker.fine.count
        let versions = worker.byVersion.count
        #expect(fine > 3)
        // A snapshot whose watermarks are not the sealed rows' bases: nothing prepared.
        #expect(
            worker.submitSealAndPrepare(
                bases: ExplorerWorker.PartBases(
                    fine: Array(repeating: 7, count: 8), version: Array(repeating: 0, count: 8)),
                through: 7, versionParts: Array(0..<8)))
        worker.drain()
        #expect(try #require(worker.prepared).isEmpty)
        #expect(worker.sealed.fine.count == fine && worker.sealed.byVersion.count == versions)
        // Sealed again, with one stored fine row that does not read: every row is either
        // prepared or left sealed, and that one is left.
        worker.fine = worker.sealed.fine
        worker.byVersion = worker.sealed.byVersion
        worker.sealed = ExplorerWorker.SealedRows()
        worker.prepared = nil
        let broken = try #require(worker.fine.keys.first)
        let connection = try database.openConnection()
        defer { connection.close() }
        _ = try connection.run(
            RollupLevel.fine.replaceExplorer, broken.bindings(.fine, on: connection) + [.blob([0xFF, 0x01])])
        #expect(
            worker.submitSealAndPrepare(
                bases: .zero, through: 1, versionParts: Array(0..<8)))
        worker.drain()
        let prepared = try #require(worker.prepared)
        let left = worker.sealed.fine.count + worker.sealed.byVersion.count
        #expect(prepared.count + left == fine + versions)
        #expect(worker.sealed.fine[broken] != nil)
        #expect(!prepared.contains { $0.level == .fine && $0.key == broken })
    }

    @Test("a seal without the version rows prepares the fine rows alone; the version rows gather the next documents")
    func versionRowsStayUnsealed() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let worker = ExplorerWorker(reader: try database.openConnection())
        defer { worker.stop() }
        func document(os: Int64) -> ExplorerWorker.Document {
            ExplorerWorker.Document(
                app: 1, day: 18_190, version: 1, os: os, device: 1, metric: Fixtures.metric(version: "1.0"))
        }
        worker.submit(document(os: 1))
        worker.drain()
        let fine = worker.heldRows
        let versions = worker.byVersion
        #expect(fine > 0 && !versions.isEmpty)
        #expect(worker.submitSealAndPrepare(bases: .zero, through: 1, versionParts: []))
        worker.submit(document(os: 2))
        worker.drain()
        let prepared = try #require(worker.prepared)
        #expect(prepared.count == fine)
        #expect(prepared.allSatisfy { $0.level == .fine && $0.key.os == 1 })
        #expect(worker.versionCache.isEmpty)
        // The version rows were not sealed: the same rows, each now holding both documents.
        #expect(Set(worker.byVersion.keys) == Set(versions.keys))
        #expect(worker.heldVersionRows == versions.count)
        for (key, row) in worker.byVersion {
            let before = try #require(versions[key])
            #expect(try row.builder(for: key).encoded() != before.builder(for: key).encoded())
        }
        #expect(worker.fine.keys.allSatisfy { $0.os == 2 })
    }

    @Test("a seal of one version part takes that part's version rows alone; the others gather the next documents")
    func versionPartSealed() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let worker = ExplorerWorker(reader: try database.openConnection())
        defer { worker.stop() }
        for version in Int64(1)...16 {
            worker.submit(
                ExplorerWorker.Document(
                    app: 1, day: 18_190 + version % 3, version: version, os: 1, device: 1,
                    metric: Fixtures.metric(version: "1.\(version)")))
        }
        worker.drain()
        let before = worker.byVersion
        func part(_ key: ExplorerRowKey) -> Int { RollupParts.part(app: key.app, day: key.day, version: key.version) }
        let parts = Set(before.keys.map(part))
        #expect(parts.count > 1)
        let sealedPart = try #require(parts.min())
        let inPart = Set(before.keys.filter { part($0) == sealedPart })
        #expect(
            worker.submitSealAndPrepare(
                bases: .zero, through: 1, versionParts: [sealedPart]))
        worker.drain()
        let prepared = try #require(worker.prepared)
        #expect(Set(prepared.filter { $0.level == .byVersion }.map(\.key)) == inPart)
        #expect(prepared.filter { $0.level == .fine }.count == before.count)
        #expect(Set(worker.byVersion.keys) == Set(before.keys).subtracting(inPart))
        #expect(worker.heldVersionRows == before.count - inPart.count)
    }

    @Test(
        "app state ids: 'all' is 0, an id made by a transaction that rolled back is never bound again; the catalog's categories are 1-7"
    )
    func stateIDs() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let connection = try database.openConnection()
        defer { connection.close() }
        var categories = ExplorerNameIDs.categories()
        for (offset, category) in ExplorerCategory.allCases.enumerated() {
            #expect(try categories.id(of: category.rawValue, on: connection) == Int64(offset + 1))
        }
        #expect(try categories.id(making: "other", on: connection) == 8)
        var writer = ExplorerNameIDs.states()
        var reader = ExplorerNameIDs.states()
        #expect(try writer.id(making: "all", on: connection) == 0)
        try connection.execute("BEGIN")
        let first = try writer.id(making: "screen/home", on: connection)
        #expect(try writer.id(making: "screen/home", on: connection) == first)
        try connection.execute("ROLLBACK")
        writer.forgetMade()
        // The rolled-back id is free again: another state takes it, and the first gets a new one.
        try connection.execute("BEGIN")
        let other = try writer.id(making: "screen/checkout", on: connection)
        let again = try writer.id(making: "screen/home", on: connection)
        try connection.execute("COMMIT")
        writer.keepMade()
        #expect(other != again && again != 0)
        #expect(try reader.id(of: "screen/home", on: connection) == again)
        #expect(try reader.id(of: "screen/missing", on: connection) == nil)
        #expect(try reader.name(of: other, on: connection) == "screen/checkout")
        #expect(try reader.name(of: 0, on: connection) == "all")
        #expect(try reader.name(of: 999, on: connection) == nil)
    }

    @Test(
        "past its probe, a prepare writes new fine rows unread, and the writer's SQL merge of the few stored ones equals the merge it would have prepared; stored rows are read"
    )
    func newFineRowsWrittenUnread() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let worker = ExplorerWorker(reader: try database.openConnection())
        defer { worker.stop() }
        let connection = try database.openConnection()
        defer { connection.close() }
        func submitDocuments() {
            for os in 1...60 {
                worker.submit(
                    ExplorerWorker.Document(
                        app: 1, day: 18_190, version: 1, os: Int64(os), device: 1,
                        metric: Fixtures.metric(version: "1.0")))
            }
            worker.drain()
        }
        submitDocuments()
        let held = worker.fine
        #expect(held.count > ExplorerWorker.defaultFineProbe * 2)
        // One row stored already, holding the same cells once more.
        let storedKey = try #require(held.keys.first)
        let storedCells = try #require(held[storedKey]).builder(for: storedKey).encoded()
        _ = try connection.run(
            RollupLevel.fine.replaceExplorer, storedKey.bindings(.fine, on: connection) + [.blob(storedCells)])
        #expect(worker.submitSealAndPrepare(bases: .zero, through: 1, versionParts: []))
        worker.drain()
        let prepared = try #require(worker.prepared)
        #expect(prepared.count == held.count && worker.sealed.fine.isEmpty)
        #expect(prepared.filter(\.mergesStored).count == held.count - ExplorerWorker.defaultFineProbe)
        for row in prepared {
            let sql = row.mergesStored ? RollupLevel.fine.upsertExplorer : RollupLevel.fine.replaceExplorer
            _ = try connection.run(sql, row.key.bindings(.fine, on: connection) + [.blob(row.cells)])
        }
        for (key, row) in held {
            let builder = try row.builder(for: key)
            let stored = try connection.first(RollupLevel.fine.selectExplorer, key.bindings(.fine, on: connection)) {
                $0.blob(0)
            }
            let expected = key == storedKey ? try builder.merged(into: storedCells) : builder.encoded()
            #expect(stored == expected)
        }
        // The same cells again, sealed before the writer tells the first seal's rows are written:
        // each may still wait in the stage's cache, so each is prepared as it is, merged in SQL
        // after the cached one.
        worker.prepared = nil
        submitDocuments()
        #expect(worker.submitSealAndPrepare(bases: .zero, through: 2, versionParts: []))
        worker.drain()
        let cached = try #require(worker.prepared)
        #expect(cached.count == held.count && cached.allSatisfy(\.mergesStored))
        // Once every fine part is written past both seals: every one is stored, and read.
        worker.fineWritten(Array(repeating: 2, count: RollupParts.count))
        worker.prepared = nil
        submitDocuments()
        #expect(worker.submitSealAndPrepare(bases: .zero, through: 3, versionParts: []))
        worker.drain()
        let again = try #require(worker.prepared)
        #expect(again.count == held.count && !again.contains(where: \.mergesStored))
    }
}

extension ExplorerWorker.PartBases {
    /// Every part of both levels at 0 (a migrated file's).
    static let zero = ExplorerStage.uniform(0)
}

extension ExplorerRowKey {
    /// The key's parameters as the writer binds them on `connection`: app state 'all' (0), its
    /// category's id (made when the table has none).
    func bindings(_ level: RollupLevel, on connection: Connection) throws -> [SQLValue] {
        var categories = ExplorerNameIDs.categories()
        return bindings(level, state: 0, category: try categories.id(making: category, on: connection))
    }
}
