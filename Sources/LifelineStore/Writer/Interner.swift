import LifelineModel

/// Finds or creates the ids of dimension strings for the writer, with a cache that follows the
/// writer's transaction and savepoints: ids created inside a savepoint are forgotten when it is
/// rolled back, ids created inside the transaction when it fails.
final class Interner {
    private struct Key: Hashable {
        var dimension: Dimension
        var value: String
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
            value = Self.truncate(value, toUTF8: dimension.maxLength)
        }
        let key = Key(dimension: dimension, value: value)
        if let id = savepoint[key] ?? transaction[key] ?? committed[key] { return id }
        if let id = try connection.first(dimension.selectSQL, [.text(value)], { $0.int64(0) }) {
            if committed.count >= capacity { committed.removeAll(keepingCapacity: true) }
            committed[key] = id
            return id
        }
        try connection.run(dimension.insertSQL, [.text(value)])
        let id = connection.lastInsertRowID
        savepoint[key] = id
        return id
    }

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

    static func truncate(_ value: String, toUTF8 limit: Int) -> String {
        var result = ""
        var used = 0
        for character in value {
            let size = character.utf8.count
            if used + size > limit { break }
            result.append(character)
            used += size
        }
        return result
    }
}

/// How values are bounded before they are stored, shared by every store so the same document
/// yields the same rows on SQLite and PostgreSQL.
package enum StoredValue {
    /// A dimension value as stored: `nil` for a missing or empty value, else at most 1,024 UTF-8
    /// bytes (whole characters).
    package static func dimension(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value.utf8.count > 1_024 ? Interner.truncate(value, toUTF8: 1_024) : value
    }

    /// The crash group key of a diagnostic: fingerprint (≤ 128 bytes) and group kind (≤ 64 bytes).
    package static func crashGroup(_ diagnostic: Diagnostic) -> (fingerprint: String, kind: String) {
        let signature = diagnostic.signature
        let fingerprint = Interner.truncate(
            signature.fingerprint.isEmpty ? "\(diagnostic.kind.rawValue):unsigned" : signature.fingerprint, toUTF8: 128)
        let kind = Interner.truncate(
            signature.groupKind.isEmpty ? diagnostic.kind.rawValue : signature.groupKind, toUTF8: 64)
        return (fingerprint, kind)
    }

    /// Frames kept of a diagnostic's attributed chain.
    package static let maxFrames = 32
}
