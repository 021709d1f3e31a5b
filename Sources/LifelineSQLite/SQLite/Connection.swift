import CSQLite
import LifelineAnalysis
import LifelineStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: a connection is owned by exactly one user at a time (the ``Database``'s
/// mutex, or the ``IngestWriter``'s thread).
final class Connection {
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// The budget of the read this (read-only, leased) connection runs now: rows are counted into
    /// it and statements interrupted at its deadline (see ``bounded(by:_:)``). Nil otherwise.
    var budget: ReadBudget?
    /// `PRAGMA synchronous` as configured, and as set now (``syncCommits(_:)``).
    private let configuredSynchronous: StorageOptions.Synchronous
    private var synchronous: StorageOptions.Synchronous

    /// SQLite's process-wide settings, applied once before the first connection opens: memory
    /// statistics off (``SQLiteLibrary``).
    private static let configured: Int32 = lifeline_sqlite3_memory_statistics_off()

    /// Opens (creating if needed) the database at `path` and applies `options`.
    init(path: String, options: Database.Options) throws(StoreError) {
        _ = Self.configured
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = StoreError.sqlite(rc, handle: db, context: "open database")
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        configuredSynchronous = options.synchronous
        synchronous = options.synchronous
        sqlite3_extended_result_codes(db, 1)
        // Waiting for a lock: poll every millisecond up to the timeout. SQLite's own busy timeout
        // backs off to 100 ms sleeps, so a writer that waited behind a short transaction of
        // another connection (the pruner's) kept sleeping long after the lock was free.
        sqlite3_busy_handler(
            db,
            { context, attempts in
                let limit = Int32(truncatingIfNeeded: Int(bitPattern: context))
                guard attempts < limit else { return 0 }
                usleep(1_000)
                return 1
            }, UnsafeMutableRawPointer(bitPattern: Int(max(1, options.busyTimeoutMilliseconds))))
        do throws(StoreError) {
            // page_size only takes effect on a new, empty file (before WAL is enabled).
            try execute("PRAGMA page_size = \(options.pageSize)")
            // A new file returns the pages pruning frees (`PRAGMA incremental_vacuum`); like the page
            // size, this can only be chosen before the first table exists.
            if try first("PRAGMA page_count", [], { $0.int64(0) }) == 0 {
                try execute("PRAGMA auto_vacuum = INCREMENTAL")
            }
            let mode = try query("PRAGMA journal_mode = WAL") { $0.text(0) }.first
            guard mode?.lowercased() == "wal" else {
                throw StoreError(
                    .unavailable, "storage does not support write-ahead logging", cause: "journal_mode=\(mode ?? "?")")
            }
            try execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
            try execute("PRAGMA foreign_keys = ON")
            let functions = RollupBlob.registerFunctions(on: db)
            guard functions == SQLITE_OK else {
                throw StoreError.sqlite(functions, handle: db, context: "register rollup merge functions")
            }
            // Savepoint sub-journals and sort spills stay in memory: on disk, every request's
            // SAVEPOINT created and wrote a temp file, which capped ingest near 1,300 payloads/s.
            try execute("PRAGMA temp_store = MEMORY")
            // 32 MiB of page cache (SQLite's default is 2 MiB): a query's pages stay in memory
            // between its steps and runs. The ingest writer sets its own (`IngestWriter.writerCacheKiB`).
            try execute("PRAGMA cache_size = -32768")
            if let maxPageCount = options.maxPageCount {
                _ = try query("PRAGMA max_page_count = \(maxPageCount)") { $0.int64(0) }
            }
        } catch {
            statements.removeAll()
            sqlite3_close_v2(db)
            throw error
        }
    }

    private var isClosed = false

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection; the object must not be used afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Whether the next transactions' commits are synced as configured (`durable`: the door's,
    /// which acknowledge documents) or not (`PRAGMA synchronous = NORMAL` in WAL mode: no sync
    /// at COMMIT; the aggregator's, whose every write is rebuilt from the raw copies if a power
    /// loss takes it). The WAL is one file written in order, so the next synced commit makes
    /// every frame before it durable too: an unsynced commit is lost only with everything after
    /// it, and a lost fold is folded again. The raw compactor's batches, written on the writer's
    /// connection after a fold, keep its level: a lost batch is compacted again. Set outside a
    /// transaction.
    func syncCommits(_ durable: Bool) throws(StoreError) {
        let level = durable ? configuredSynchronous : .normal
        guard level != synchronous else { return }
        try execute("PRAGMA synchronous = \(level.rawValue)")
        synchronous = level
    }

    /// Runs one or more statements without parameters (migrations, pragmas, transaction control).
    func execute(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if let message { sqlite3_free(message) }
        guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, handle: handle, context: "execute") }
    }

    /// The cached prepared statement for `sql`, reset and ready to bind.
    func cached(_ sql: String) throws(StoreError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try Statement(database: handle, sql: sql, persistent: true)
        statements[sql] = statement
        return statement
    }

    /// Runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) -> Int {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps every row.
    func query<T>(
        _ sql: String, _ values: [SQLValue] = [], _ row: (Statement) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [T] = []
        while try statement.step() {
            try count()
            rows.append(try row(statement))
        }
        return rows
    }

    /// Runs a query and maps its first row, if any.
    func first<T>(
        _ sql: String, _ values: [SQLValue] = [], _ row: (Statement) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return try row(statement)
    }

    /// The rowid of the last successful INSERT on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rolls back the open transaction, if any, ignoring errors (used on failure paths).
    func rollbackQuietly() {
        if inTransaction { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    /// Runs `body` inside one deferred read transaction (`BEGIN … COMMIT`): one snapshot.
    func readTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(begin: "BEGIN", body)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(begin: "BEGIN IMMEDIATE", body)
    }

    private func transaction<T>(begin: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute(begin)
        do throws(StoreError) {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollbackQuietly()
            throw error
        }
    }
}

/// The SQLite library as this process set it up.
package enum SQLiteLibrary {
    /// Whether SQLite counts its memory use: off once a connection opened, so that allocations do
    /// not take a process-wide mutex (the writer, the explorer's worker and the readers contended
    /// for it: `perf` showed it among the writer's waits). The bytes counted are 0 when off.
    package static var countsMemory: Bool { sqlite3_memory_used() > 0 }
}
