/// An error of a store (SQLite or PostgreSQL). ``message`` is safe to show to clients (it never contains SQL or file
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

    /// An error of kind `code` with a client-safe `message`; `cause` and `sqliteCode` are for logs.
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
}
