import LifelineAnalysis
import LifelineStorage

/// How ``ExplorerStage`` writes explorer rows on the writer's connection: each row's key bound
/// with its app state's and category's ids (``ExplorerNameIDs``, made on first write), then its
/// cells written as they are (a row already merged with its stored cells) or merged into the
/// stored ones in SQL (`ll_merge_explorer_map`).
struct ExplorerRowWriter {
    private var states = ExplorerNameIDs.states()
    private var categories = ExplorerNameIDs.categories()
    /// Rows written since the transaction began.
    private(set) var rowsWritten = 0

    private static let upserts = (
        fine: RollupLevel.fine.upsertExplorer, byVersion: RollupLevel.byVersion.upsertExplorer
    )
    private static let replacements = (
        fine: RollupLevel.fine.replaceExplorer, byVersion: RollupLevel.byVersion.replaceExplorer
    )

    /// Writes `cells` as `key`'s row at `level`: merged into a stored row in SQL (`merging`), or
    /// replacing it.
    mutating func write(
        _ cells: [UInt8], at key: ExplorerRowKey, _ level: RollupLevel, merging: Bool, on connection: Connection
    ) throws(StoreError) {
        let sql =
            merging
            ? (level == .fine ? Self.upserts.fine : Self.upserts.byVersion)
            : (level == .fine ? Self.replacements.fine : Self.replacements.byVersion)
        let state = try states.id(making: key.appState, on: connection)
        let category = try categories.id(making: key.category, on: connection)
        try connection.run(sql, key.bindings(level, state: state, category: category) + [.blob(cells)])
        rowsWritten += 1
    }

    /// The rows of both levels (fine, then version), each row's observations replayed into its
    /// cells and merged into its stored row in SQL.
    mutating func merge(
        fine: [ExplorerRowKey: ExplorerPendingRow], versions: [ExplorerRowKey: ExplorerPendingRow],
        on connection: Connection
    ) throws(StoreError) {
        for (level, rows) in [(RollupLevel.fine, fine), (.byVersion, versions)] {
            for (key, row) in rows {
                try write(row.encoded(for: key), at: key, level, merging: true, on: connection)
            }
        }
    }

    /// A write begins: ids made by a transaction that did not commit (whether or not the stage
    /// was told) are gone.
    mutating func transactionBegins() {
        states.forgetMade()
        categories.forgetMade()
        rowsWritten = 0
    }

    /// The transaction ended: the ids it made are stored (`committed`) or gone.
    mutating func transactionEnded(committed: Bool) {
        if committed {
            states.keepMade()
            categories.keepMade()
        } else {
            states.forgetMade()
            categories.forgetMade()
        }
    }
}
