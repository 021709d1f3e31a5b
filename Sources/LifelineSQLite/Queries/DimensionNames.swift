import LifelineStorage
import Synchronization

/// A cache of dimension values by id, shared by the read connections. Ids are never reused or
/// renamed, so entries never go stale; unknown ids are looked up on a connection.
final class DimensionNames: Sendable {
    private struct Key: Hashable {
        var dimension: Dimension
        var id: Int64
    }

    private let cache = Mutex<[Key: String]>([:])
    private let capacity = 100_000

    /// The value of `id` in `dimension`; `"unknown"` for 0 or a missing row.
    func name(_ dimension: Dimension, _ id: Int64, on connection: Connection) throws(StoreError) -> String {
        guard id != 0 else { return "unknown" }
        let key = Key(dimension: dimension, id: id)
        if let value = cache.withLock({ $0[key] }) { return value }
        let value =
            try connection.first(
                "SELECT \(dimension.column) FROM \(dimension.table) WHERE id = ?", [.integer(id)], { $0.text(0) })
            ?? "unknown"
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = value
        }
        return value
    }
}
