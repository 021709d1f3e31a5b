import LifelineIngest
import LifelineModel
import LifelineStorage

/// Finds or creates the ids of dimension strings for the writer, with a cache that follows the
/// writer's transaction and savepoints: ids created inside a savepoint are forgotten when it is
/// rolled back, ids created inside the transaction when it fails.
final class Interner {
    private struct Key: Hashable {
        /// `nil`: an app state (`app_state_values`: `value` is its domain).
        var dimension: Dimension?
        var value: String
        var label = ""
        var metadata = ""
    }

    private var committed: [Key: Int64] = [:]
    private var transaction: [Key: Int64] = [:]
    private var savepoint: [Key: Int64] = [:]
    private let capacity: Int

    init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// The id of `value` in `dimension`, created if needed; `nil` for `nil` or empty values.
    func id(_ dimension: Dimension, _ value: String?, on connection: Connection) throws(StoreError) -> Int64? {
        guard var value, !value.isEmpty else { return nil }
        if value.utf8.count > dimension.maxLength {
            value = StoredValue.truncate(value, toUTF8: dimension.maxLength)
        }
        let key = Key(dimension: dimension, value: value)
        // Nearly every lookup is a hit: no SQL text, no bindings, one probe for ids made before.
        if let id = cached(key) { return id }
        return try intern(
            key, select: dimension.selectSQL, insert: dimension.insertSQL, values: [.text(value)], on: connection)
    }

    /// The id of a 2.0.0 app state in `app_state_values`, created on first sight, cached as the
    /// dimensions are: an upsert per state and document was half of what writing a report's
    /// per-state rows cost the writer (`perf`, the fleet-like load).
    func stateID(_ state: ReportedState, on connection: Connection) throws(StoreError) -> Int64 {
        let key = Key(dimension: nil, value: state.domain, label: state.label, metadata: state.metadata)
        if let id = cached(key) { return id }
        return try intern(
            key, select: Self.selectState, insert: Self.insertState,
            values: [.text(state.domain), .text(state.label), .text(state.metadata)], on: connection)
    }

    /// `key`'s cached id. A key is in one of the three maps at most (an id is made only when none
    /// has it), so the committed ids, where nearly every hit is, are looked at first.
    private func cached(_ key: Key) -> Int64? {
        committed[key] ?? savepoint[key] ?? transaction[key]
    }

    /// `key`'s id, not cached: read by `select`, else made by `insert` (both bound to `values`),
    /// kept with the savepoint that made it.
    private func intern(
        _ key: Key, select: String, insert: String, values: [SQLValue], on connection: Connection
    ) throws(StoreError) -> Int64 {
        if let id = try connection.first(select, values, { $0.int64(0) }) {
            if committed.count >= capacity { committed.removeAll(keepingCapacity: true) }
            committed[key] = id
            return id
        }
        try connection.run(insert, values)
        let id = connection.lastInsertRowID
        savepoint[key] = id
        return id
    }

    private static let selectState =
        "SELECT id FROM app_state_values WHERE domain = ?1 AND label = ?2 AND metadata = ?3"
    private static let insertState = "INSERT INTO app_state_values (domain, label, metadata) VALUES (?1, ?2, ?3)"

    /// The savepoint was released: its new ids belong to the transaction.
    func releaseSavepoint() {
        transaction.merge(savepoint) { _, new in new }
        savepoint.removeAll(keepingCapacity: true)
    }

    /// The savepoint was rolled back: its new ids no longer exist.
    func rollbackSavepoint() {
        savepoint.removeAll(keepingCapacity: true)
    }

    /// The transaction committed: its new ids are durable.
    func commit() {
        releaseSavepoint()
        if committed.count + transaction.count > capacity { committed.removeAll(keepingCapacity: true) }
        committed.merge(transaction) { _, new in new }
        transaction.removeAll(keepingCapacity: true)
    }

    /// The transaction was rolled back: forget everything it created.
    func rollback() {
        savepoint.removeAll(keepingCapacity: true)
        transaction.removeAll(keepingCapacity: true)
    }
}
