import LifelineIngest
import LifelineModel
import PostgresNIO
import Synchronization

/// What a fold batch's parts leave for its end: the coarser rollup rows and the explorer's
/// version-level rows (per app), and the per-state rows.
struct BatchFold {
    var coarse: [Int64: CoarseRollups] = [:]
    let explorer = ExplorerCarry()
    var states = StateRows()
}

/// The explorer's rows of a fold batch, carried from part to part by the explorer's task (beside
/// the rollups' loop). Taken out and put back by that task alone, so its builders are never
/// shared while they change: held by the caller across the task, each part copied every
/// version-level builder once (~7 MB).
final class ExplorerCarry: Sendable {
    private let rows = Mutex<[Int64: ExplorerRows]>([:])

    /// The rows, none left behind.
    func take() -> [Int64: ExplorerRows] {
        rows.withLock { rows in
            defer { rows = [:] }
            return rows
        }
    }

    func put(_ value: [Int64: ExplorerRows]) { rows.withLock { $0 = value } }
}

extension PostgresStore {
    /// Documents of a fold batch decoded, added and written at a time (``fold(part:careful:into:result:on:)``):
    /// a default batch is two parts, a backlog batch eight. Over 20 s of the reference load (with
    /// one malloc arena, 256 documents retained), parts of 1,024 held a leader at 195 MB, of 512 at
    /// 177–182, of 256 at 170–172; parts of 256 folded ~15 % fewer documents beside the door (more
    /// statements per document) and drained slower (BENCHMARKS.md, "A PostgreSQL node's malloc").
    static let foldPart = 512

    /// Folds one part of a batch: its documents' rollup rows (fine cells written now, coarser
    /// ones summed into `fold`), explorer cells (likewise), per-state rows and diagnostics.
    func fold(
        part: [Candidate], careful: Bool, into fold: inout BatchFold, result: inout PostgresFoldResult,
        on connection: PostgresConnection
    ) async throws {
        let logger = self.logger
        let items = try await items(for: part, on: connection)
        // The explorer's cells are made and written beside the rollups, on the same connection:
        // its statements queue between theirs, and while PostgreSQL runs one side's, Swift
        // works on the other's (the fold alternated between the two: BENCHMARKS.md, "The
        // leader's explorer beside its rollups"). Not in careful mode: a savepoint rolled back
        // there would take the explorer's statements with it.
        let explorerItems = part.compactMap { candidate in items[candidate.id].map { (candidate.app, $0) } }
        let explorer = fold.explorer
        async let explorerFolded: Void =
            careful ? () : Self.foldExplorer(explorerItems, into: explorer, on: connection, logger: logger)
        var rollups: [Int64: RollupRows] = [:]
        for (app, documents) in Dictionary(part.map { ($0.app, 1) }, uniquingKeysWith: +) {
            rollups[app] = RollupRows(reservingFor: documents)
        }
        for candidate in part {
            result.folded += 1
            // The explorer's task works beside this loop: the door's requests get a thread too.
            if result.folded % 64 == 0 { await Task.yield() }
            guard let item = items[candidate.id] else {
                result.skipped += 1
                continue
            }
            // Retried document by document (careful), a diagnostic document that fails is rolled
            // back to its savepoint and skipped; any other failure fails the fold.
            let savepoint = careful && item.family == .diagnostic
            if savepoint { try await connection.query("SAVEPOINT fold", logger: logger) }
            do {
                try await Self.fold(
                    item, payload: candidate.id, app: candidate.app,
                    rollups: &rollups[candidate.app, default: RollupRows()], states: &fold.states,
                    on: connection, logger: logger)
                if savepoint { try await connection.query("RELEASE fold", logger: logger) }
            } catch let error where savepoint {
                try await connection.query("ROLLBACK TO fold", logger: logger)
                logger.error(
                    "payload \(candidate.id) could not be folded: kept raw, counted nowhere",
                    metadata: ["error": "\(String(reflecting: error))"])
                result.skipped += 1
            }
        }
        for (app, rows) in rollups.sorted(by: { $0.key < $1.key }) {
            try await rows.flushFine(app: app, on: connection, logger: logger)
            fold.coarse[app, default: CoarseRollups()].add(rows)
        }
        try await explorerFolded
        if careful { try await Self.foldExplorer(explorerItems, into: explorer, on: connection, logger: logger) }
    }
}
