import CSQLite
import LifelineStorage

extension StoreError {
    /// Maps a SQLite result code to a store error. `context` says what was being done (for logs).
    static func sqlite(_ resultCode: Int32, handle: OpaquePointer?, context: String) -> StoreError {
        let detail = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(resultCode))
        let cause = "\(context): \(detail) [\(resultCode)]"
        switch resultCode & 0xff {
        case SQLITE_FULL:
            return StoreError(.unavailable, "storage is full", cause: cause, sqliteCode: resultCode)
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM,
            SQLITE_PROTOCOL, SQLITE_NOLFS, SQLITE_PERM:
            return StoreError(.unavailable, "storage is temporarily unavailable", cause: cause, sqliteCode: resultCode)
        case SQLITE_CONSTRAINT, SQLITE_TOOBIG, SQLITE_MISMATCH, SQLITE_RANGE:
            return StoreError(.invalid, "a value was rejected by the store", cause: cause, sqliteCode: resultCode)
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return StoreError(.internal, "the database file is damaged", cause: cause, sqliteCode: resultCode)
        default:
            return StoreError(.internal, "internal storage error", cause: cause, sqliteCode: resultCode)
        }
    }
}
