import CSQLite

/// An error of the store. ``message`` is safe to show to clients (it never contains SQL or file
/// paths); ``cause`` carries the internal detail (SQLite's message, the statement's purpose) for logs.
package struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; the HTTP edge maps it to a status code.
    package enum Code: String, Sendable, Equatable {
        /// The storage cannot take the request now: disk full, I/O error, read-only, locked
        /// beyond the busy timeout, writer shut down (HTTP 503, retry later).
        case unavailable
        /// Migrations could not be applied or do not match this binary.
        case migration
        /// The requested row does not exist (HTTP 404).
        case notFound = "not_found"
        /// The input was rejected: a constraint or a validation rule (HTTP 422).
        case invalid
        /// Anything else, a bug or a corrupt database (HTTP 500).
        case `internal`
    }

    /// The kind of failure.
    package var code: Code
    /// A client-safe description of what was wrong.
    package var message: String
    /// Internal detail for logs (may name tables or contain SQLite's own message).
    package var cause: String?
    /// The extended SQLite result code, when the error came from SQLite.
    package var sqliteCode: Int32?

    package init(_ code: Code, _ message: String, cause: String? = nil, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
        self.sqliteCode = sqliteCode
    }

    package var description: String {
        var text = "\(code.rawValue): \(message)"
        if let cause { text += " (\(cause))" }
        return text
    }

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
