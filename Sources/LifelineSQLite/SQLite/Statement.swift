import CSQLite
import LifelineStorage

/// A prepared statement of one ``Connection``. Not thread-safe: used by the owner of the connection only.
final class Statement {
    let handle: OpaquePointer
    private let database: OpaquePointer

    /// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(database: OpaquePointer, sql: String, persistent: Bool) throws(StoreError) {
        self.database = database
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(database, sql, -1, flags, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw StoreError.sqlite(rc, handle: database, context: "prepare")
        }
        self.handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1…n.
    func bind(_ values: [SQLValue]) throws(StoreError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    func bind(_ value: SQLValue, at index: Int32) throws(StoreError) {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let int):
            rc = sqlite3_bind_int64(handle, index, int)
        case .real(let double):
            rc = sqlite3_bind_double(handle, index, double)
        case .text(let string):
            var string = string
            rc = string.withUTF8 { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    return sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(buffer.count), Self.transient)
                }
            }
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob(handle, index, base, Int32(buffer.count), Self.transient)
            }
        }
        guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, handle: database, context: "bind") }
    }

    /// Binds an integer to the 1-based parameter `index` (the hot path of the rollup writer).
    func bind(int value: Int64, at index: Int32) throws(StoreError) {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, handle: database, context: "bind") }
    }

    /// Binds a double to the 1-based parameter `index` (non-finite values bind NULL).
    func bind(double value: Double, at index: Int32) throws(StoreError) {
        let rc = value.isFinite ? sqlite3_bind_double(handle, index, value) : sqlite3_bind_null(handle, index)
        guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, handle: database, context: "bind") }
    }

    /// Runs the bound statement to completion, then resets it (bindings are overwritten by the next use).
    func runToCompletion() throws(StoreError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Advances; `true` when a row is available, `false` when done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError.sqlite(rc, handle: database, context: "step")
        }
    }

    /// Resets the statement and clears its bindings so it can be reused.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Whether column `index` (0-based) is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as an integer (NULL reads as 0).
    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as an integer, `nil` for NULL.
    func optionalInt64(_ index: Int32) -> Int64? { isNull(index) ? nil : int64(index) }

    /// Column `index` as a double, `nil` for NULL.
    func optionalDouble(_ index: Int32) -> Double? { isNull(index) ? nil : sqlite3_column_double(handle, index) }

    /// Column `index` as text (NULL reads as "").
    func text(_ index: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Column `index` as text, `nil` for NULL.
    func optionalText(_ index: Int32) -> String? { isNull(index) ? nil : text(index) }

    /// Column `index` as bytes (NULL reads as empty).
    func blob(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Runs `body` on column `index`'s bytes in place, without copying them (NULL reads as empty);
    /// the buffer is valid only during the call.
    func withBlob<T>(_ index: Int32, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Column `index` as a ``SQLValue``.
    func value(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT: return .text(text(index))
        case SQLITE_BLOB: return .blob(blob(index))
        default: return .null
        }
    }

    /// Number of result columns.
    var columnCount: Int32 { sqlite3_column_count(handle) }
}
