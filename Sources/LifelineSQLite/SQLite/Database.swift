import CSQLite
import LifelineAnalysis
import LifelineStorage
import Synchronization

/// The Lifeline SQLite database: one file in WAL mode.
///
/// This object owns one connection (behind a mutex) for simple reads, migrations and key
/// management, and a small pool of read-only connections for the aggregate queries
/// (``AggregateReader``); ingest goes through an ``IngestWriter``, which opens its own write
/// connection to the same file.
///
/// One rule for blocking work: async code calls ``read(_:)`` (one read transaction on a pooled
/// read-only connection) or ``write(_:)`` (this object's connection); both run on dedicated
/// threads (``StoreThreads``), never on Swift's cooperative pool. The synchronous methods block
/// the calling thread: they are for those closures, tools and tests.
package final class Database: Sendable, AggregateSource {
    /// Options every connection is opened with (store-neutral: ``StorageOptions``).
    package typealias Options = StorageOptions
    /// `PRAGMA synchronous` levels offered.
    package typealias Synchronous = StorageOptions.Synchronous

    /// Path of the database file.
    package let path: String
    /// Options every connection to this file is opened with.
    package let options: Options
    private let connection: Mutex<Connection>
    /// Read-only connections for the aggregate queries.
    let readers: ReadPool
    /// Dimension values by id (ids never change once created).
    let names = DimensionNames()
    /// Symbolicates sample frames from the imported debug symbols; nil without `llvm-symbolizer`.
    package let symbolicator: Symbolicator?
    /// The aggregator's progress while an ``IngestWriter`` runs on this database in this process:
    /// aggregate reads wait for it to fold what was acknowledged (answers never lag an ack).
    package let fold = FoldProgress()

    /// Opens the database at `path`, creating the file if needed. Does not migrate: call ``migrate()``.
    package init(path: String, options: Options = Options()) throws(StoreError) {
        self.path = path
        self.options = options
        let connection = try Connection(path: path, options: options)
        self.connection = Mutex(connection)
        self.readers = ReadPool(path: path, options: options)
        self.symbolicator = options.makeSymbolicator()
    }

    /// Runs `body` inside one read transaction (one snapshot) on a leased read-only connection;
    /// every query of `body` runs on a reader thread (at a lower CPU priority than ingest:
    /// ``StoreThreads/readerNiceness``), never on Swift's cooperative pool.
    package func read<T: Sendable>(
        _ body: @escaping @Sendable (any AggregateReader) async throws -> T
    ) async throws -> T {
        let readsExplorer = ReadFreshness.readsExplorer
        if ReadFreshness.waitsForFold {
            try await fold.waitForFold(timeout: Double(max(1, options.timeoutSeconds)), explorer: readsExplorer)
        }
        let lease = try await readers.lease()
        let symbols = symbolicator.map { SymbolSource(directory: symbolDirectory, symbolicator: $0) }
        let result: Result<T, any Error>
        do {
            try await StoreThreads.reads.runIfActive {
                StoreThreads.lowerReaderPriority()
                try lease.connection.execute("BEGIN")
            }
            do {
                let reader = SQLiteAggregateReader(
                    lease: lease, names: names, symbols: symbols, readsExplorer: readsExplorer)
                result = .success(try await body(reader))
            } catch {
                result = .failure(error)
            }
            // Nothing was written: the rollback only ends the snapshot.
            try await StoreThreads.reads.runIfActive { lease.connection.rollbackQuietly() }
        } catch {
            readers.giveBack(lease)
            throw error
        }
        readers.giveBack(lease)
        return try result.get()
    }

    /// Runs `body` (calls of this object's synchronous methods: keys, sessions, alert state) on a
    /// store thread, off Swift's cooperative pool. The name says where it runs, not what it does:
    /// these methods use this object's one read-write connection, whether they read or write.
    package func onStoreThread<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await StoreThreads.writes.runIfActive { try body(self) }
    }

    /// Runs `body` with exclusive use of this object's connection.
    func withConnection<R: Sendable>(_ body: (Connection) throws(StoreError) -> R) throws(StoreError) -> R {
        try connection.withLock { (connection: inout sending Connection) throws(StoreError) -> sending R in
            try body(connection)
        }
    }

    /// Opens a new connection to the same file with the same options (for the writer, its
    /// checkpointer and the explorer's reader); `busyTimeoutMilliseconds` replaces the options'
    /// wait for a lock.
    func openConnection(busyTimeoutMilliseconds: Int32? = nil) throws(StoreError) -> Connection {
        var options = options
        if let busyTimeoutMilliseconds { options.busyTimeoutMilliseconds = busyTimeoutMilliseconds }
        return try Connection(path: path, options: options)
    }

    /// Runs a read-only SQL query and returns its rows; for tests, tools and diagnostics.
    /// Never pass client input as `sql`; bind it through `bindings`.
    package func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        try withConnection { (connection) throws(StoreError) -> [[SQLValue]] in
            let statement = try Statement(database: connection.handle, sql: sql, persistent: false)
            let isPragma = sql.prefix(6).uppercased() == "PRAGMA"
            guard isPragma || sqlite3_stmt_readonly(statement.handle) != 0 else {
                throw StoreError(.invalid, "only read-only statements are allowed")
            }
            try statement.bind(bindings)
            var rows: [[SQLValue]] = []
            while try statement.step() {
                rows.append((0..<statement.columnCount).map { statement.value($0) })
            }
            return rows
        }
    }

    /// Moves everything in the write-ahead log into the database file and truncates the log
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`), so the `.sqlite` file alone is complete: what every
    /// command does before it exits, and the server once its writer has stopped. Returns false
    /// (and leaves the log for the next open) when a reader still held an old snapshot.
    @discardableResult
    package func checkpointForExit() -> Bool {
        let busy = try? withConnection { (connection) throws(StoreError) -> Int64 in
            try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int64(0) }.first ?? 1
        }
        return busy == 0
    }

    /// Runs SQL statements that change the database (tests and tools only; not for client input).
    package func execute(_ sql: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in try connection.execute(sql) }
    }
}
