import LifelineIngest
import LifelineModel
import LifelineStorage

/// A newly inserted payload, as seen by the ``ItemWriteStage``s.
struct StoredItem {
    /// `payloads.id` of the new row.
    var payloadID: Int64
    /// `apps.id`.
    var appID: Int64
    /// The item being written.
    var item: IngestItem
    /// Window begin (epoch seconds) or, without one, the received time.
    var occurredAt: Int64
    /// `YYYY-MM-DD` (UTC) of ``occurredAt``.
    var day: String
}

/// The writer's connection and dimension cache, inside the open transaction and savepoint.
struct WriteSession {
    let connection: Connection
    let interner: Interner

    /// The id of `value` in `dimension`, created if needed; `nil` for `nil` or empty.
    func id(_ dimension: Dimension, _ value: String?) throws(StoreError) -> Int64? {
        try interner.id(dimension, value, on: connection)
    }
}

/// One step of writing a new payload, run inside the same transaction (and savepoint) as the
/// payload row. The normalized rows are stages; rollups will be another one.
protocol ItemWriteStage {
    /// Writes this stage's rows for `stored`. Throwing rolls the whole request back.
    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError)
    /// The current request's savepoint was released: what it wrote stays in the batch.
    func requestReleased()
    /// The current request's savepoint was rolled back: forget what it wrote.
    func requestRolledBack()
    /// Called once per batch just before COMMIT, inside the transaction (deferred writes).
    /// Throwing abandons the whole batch.
    func beforeCommit(on connection: Connection) throws(StoreError)
    /// The batch was rolled back (or a deferred write failed): forget everything of it.
    func batchAborted()
}

extension ItemWriteStage {
    func requestReleased() {}
    func requestRolledBack() {}
    func beforeCommit(on connection: Connection) throws(StoreError) {}
    func batchAborted() {}
}

/// The stages the aggregator runs for every document it folds, in order. (The per-payload
/// normalized rows — exit counts, signposts, histograms, scalars — are no longer written: they
/// only existed to be summed into the rollups, which are folded from the documents; migration
/// 0012. `RollupRebuilder` still reads the rows older databases hold, when they are upgraded.)
enum DefaultStages {
    /// `explorer`: when the explorer's rows are written (``ExplorerStage/Deferral``; `nil`: at every
    /// fold, as offline folds do); `rollups`: when the version-level rollups are
    /// (``RollupStage/Deferral``, the same); `reader` and `onPrepared`: the explorer's worker prepares their
    /// writes on that connection and wakes the writer (``ExplorerStage/init(deferral:reader:onPrepared:)``).
    static func make(
        explorer: ExplorerStage.Deferral? = nil, rollups: RollupStage.Deferral? = nil, reader: Connection? = nil,
        onPrepared: @escaping @Sendable () -> Void = {}
    ) -> [any ItemWriteStage] {
        // The explorer's rows are written before the rollups' cells, whose part write yields to a
        // long one of theirs (``RollupStage/yieldsTo``).
        let explorer = ExplorerStage(deferral: explorer, reader: reader, onPrepared: onPrepared)
        let rollups = RollupStage(deferral: rollups)
        rollups.yieldsTo = explorer
        return [StateRowsStage(), DiagnosticRowsStage(), explorer, rollups]
    }
}

/// Ids of `units` rows, seeded by migration 0001.
enum UnitCode {
    static func id(_ unit: MeasurementUnit?) -> Int64? {
        guard let unit else { return nil }
        switch unit {
        case .milliseconds: return 1
        case .bytes: return 2
        case .instructions: return 3
        case .millisecondsPerSecond: return 4
        case .apl: return 5
        case .bars: return 6
        case .count: return 7
        case .percent: return 8
        }
    }
}
