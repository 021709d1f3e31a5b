import LifelineStorage

/// A packed explorer row's key. The version level has no OS and device (both 0 in its keys).
struct ExplorerRowKey: Hashable, Sendable {
    var app: Int64
    var day: Int64
    var version: Int64
    var os: Int64
    var device: Int64
    var appState: String
    /// The category's key (``ExplorerCatalog/categoryKey(ofMetric:)``).
    var category: String

    /// The same cell at the version level.
    var byVersion: ExplorerRowKey {
        var key = self
        key.os = 0
        key.device = 0
        return key
    }

    /// The upsert's key parameters at `level` (``RollupLevel/upsertExplorer``), the app state and
    /// category being `state` and `category`, their ids (``ExplorerNameIDs``).
    func bindings(_ level: RollupLevel, state: Int64, category: Int64) -> [SQLValue] {
        let dimensions: [Int64] = level == .fine ? [version, os, device] : [version]
        return [.integer(app), .integer(day)] + dimensions.map { .integer($0) } + [
            .integer(state), .integer(category),
        ]
    }
}
