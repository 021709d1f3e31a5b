import Crypto
import Foundation
import LifelineModel
import LifelineStorage
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The PostgreSQL store: a pool of connections (``PostgresLocation/poolSize``) shared by ingest
/// (``DocumentWriter``), the aggregate queries (``AggregateSource``) and leader election. Several
/// `lifeline serve` processes may share one database: idempotency is kept by the database's
/// constraints, and the leader alone folds the rollups (``foldOnce(limit:)``), never in process memory.
package final class PostgresStore: Sendable {
    package let location: PostgresLocation
    let client: PostgresClient
    let logger: Logger
    private let running: Mutex<Task<Void, Never>?>
    /// Set by the pool's task just before it enters `run()`: queries wait for it (PostgresNIO
    /// warns about a lease before `run()`).
    private let started = StartFlag()

    private final class StartFlag: Sendable {
        let value = Mutex(false)
    }
    /// Raw-document partitions known to exist (by day), so each is created once per process.
    let partitions = Mutex<Set<String>>([])
    /// App ids by bundle id, once committed (rows of `apps` are never renamed or deleted), so a
    /// request does not spend two round trips finding its app. Bounded by the apps with keys.
    let appIDs = Mutex<[String: Int64]>([:])
    /// Where this node keeps its copies of debug-symbol slices (``symbolFile(uuid:on:)``).
    package let symbolCache: URL
    /// Symbolicates crash frames when read; nil without `llvm-symbolizer`.
    package let symbolicator: Symbolicator?
    /// Groups this node's ingest requests into transactions.
    let writeQueue: WriteQueue
    /// The aggregator's counters and lag as this node saw them last.
    let aggregation = Mutex(AggregationCounters())
    /// Documents this node appended, kept decoded for its fold while it leads.
    let retained = Mutex(RetainedItems())
    /// Bytes per stored chunk of a debug-symbol slice: what one statement carries, and what a
    /// node holds in memory at a time.
    let symbolChunkBytes: Int
    /// The longest a request waits on the database (connection, statement, lock): then 503. The
    /// server passes `database.timeout_seconds` (5 s); tools keep the generous default (30 s).
    package let timeout: Duration

    /// Connects lazily: the pool opens connections on first use. Call ``shutdown()`` when done.
    /// - Parameters:
    ///   - symbolCache: this node's copies of debug symbols (default: a directory of the system's
    ///     temporary directory named after the database).
    ///   - symbolicator: symbolicates crash frames when read (nil: frames stay binary + offset).
    ///   - symbolChunkBytes: bytes per stored chunk of a debug-symbol slice (8 MiB).
    package init(
        location: PostgresLocation, logger: Logger = Logger(label: "lifeline.postgres"), symbolCache: URL? = nil,
        symbolicator: Symbolicator? = nil, symbolChunkBytes: Int = 8 << 20, timeout: Duration = .seconds(30)
    ) throws(PostgresStoreError) {
        self.location = location
        self.timeout = timeout
        self.symbolChunkBytes = max(1, symbolChunkBytes)
        // Half the pool writes at most; the rest stays for queries, keys and the leader's work.
        self.writeQueue = WriteQueue(writers: location.poolSize / 2)
        self.logger = logger
        let name = String(
            SHA256.hash(data: Data(location.description.utf8)).map { String(format: "%02x", $0) }.joined().prefix(16))
        self.symbolCache =
            symbolCache
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "lifeline-symbols-\(name)", isDirectory: true)
        self.symbolicator = symbolicator
        let client = PostgresClient(
            configuration: try location.clientConfiguration(timeout: timeout), backgroundLogger: logger)
        self.client = client
        let started = self.started
        self.running = Mutex(
            Task {
                started.value.withLock { $0 = true }
                await client.run()
            })
    }

    /// Opens the store of `url` (`postgres://…`).
    package convenience init(
        url: String, logger: Logger = Logger(label: "lifeline.postgres"), symbolCache: URL? = nil,
        symbolicator: Symbolicator? = nil, symbolChunkBytes: Int = 8 << 20, timeout: Duration = .seconds(30)
    ) throws(PostgresStoreError) {
        try self.init(
            location: try PostgresLocation(url), logger: logger, symbolCache: symbolCache, symbolicator: symbolicator,
            symbolChunkBytes: symbolChunkBytes, timeout: timeout)
    }

    /// Closes every connection.
    package func shutdown() async {
        let task = running.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    // MARK: Migrations

    /// Applies the migrations of `migrations/postgres/` not applied yet, each in its transaction,
    /// under an advisory lock so nodes starting together migrate once. A shipped migration whose
    /// checksum changed is refused. Returns the ones applied.
    @discardableResult
    package func migrate(_ migrations: [Migration] = EmbeddedPostgresMigrations.all) async throws -> [Migration] {
        try await waitForPool()
        return try await client.withConnection { connection in
            // Migrations may move many rows and wait for other nodes' lock: no time bound on this
            // session while they run (``resetTimeouts`` before the connection goes back to the pool).
            try await connection.query("SET statement_timeout = 0", logger: logger)
            try await connection.query("SET lock_timeout = 0", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at bigint NOT NULL)
                """, logger: logger)
            var applied: [Migration] = []
            try await connection.query("SELECT pg_advisory_lock(\(Self.migrationLock))", logger: logger)
            do {
                var known: [Int: String] = [:]
                for try await (version, checksum) in try await connection.query(
                    "SELECT version, checksum FROM schema_migrations", logger: logger
                ).decode((Int, String).self) {
                    known[version] = checksum
                }
                for migration in migrations.sorted(by: { $0.version < $1.version }) {
                    if let checksum = known[migration.version] {
                        guard checksum == migration.checksum else {
                            throw PostgresStoreError(
                                "migration \(migration.identifier) was changed after it was applied (checksum differs)")
                        }
                        continue
                    }
                    try await connection.withTransaction(logger: logger) { connection in
                        for statement in Self.statements(migration.sql) {
                            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        }
                        let version = migration.version
                        let name = migration.name
                        let checksum = migration.checksum
                        let now = Int64(Date().timeIntervalSince1970)
                        try await connection.query(
                            """
                            INSERT INTO schema_migrations (version, name, checksum, applied_at)
                            VALUES (\(version), \(name), \(checksum), \(now))
                            """, logger: logger)
                    }
                    applied.append(migration)
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
                await resetTimeouts(connection)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
            await resetTimeouts(connection)
            return applied
        }
    }

    /// Back to the pool's time bounds (set at connection start) on a connection migrations used.
    private func resetTimeouts(_ connection: PostgresConnection) async {
        _ = try? await connection.query("RESET statement_timeout", logger: logger)
        _ = try? await connection.query("RESET lock_timeout", logger: logger)
    }

    /// Returns once the pool's task runs (a lease before that only logs PostgresNIO's warning and
    /// waits); immediate after the first call.
    func waitForPool() async throws {
        while !started.value.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
    }

    /// The versions applied, in order.
    package func appliedMigrations() async throws -> [Int] {
        var versions: [Int] = []
        let rows = try await client.query("SELECT version FROM schema_migrations ORDER BY version", logger: logger)
        for try await version in rows.decode(Int.self) { versions.append(version) }
        return versions
    }

    /// Advisory lock keys (one namespace: `lifeline` in ASCII, then a number).
    static let migrationLock: Int64 = 0x6C69_6665_6C69_0001
    /// The leader lock of ``LeaderElection``.
    package static let leaderLock: Int64 = 0x6C69_6665_6C69_0002
    static let partitionLock: Int64 = 0x6C69_6665_6C69_0003

    /// The statements of a migration file: split at `;` ending a line (the files hold no
    /// functions or strings with such a `;`), comments and blank statements dropped.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("--") || trimmed.isEmpty { continue }
            current += line + "\n"
            if trimmed.hasSuffix(";") {
                statements.append(String(current.trimmingCharacters(in: .whitespacesAndNewlines).dropLast()))
                current = ""
            }
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }

    // MARK: Partitions

    /// Days whose raw documents get their own partition: recent ones (a payload is about the day
    /// before, diagnostics up to a week late); anything else lands in the default partition, so a
    /// client inventing dates cannot make the writer create tables without bound.
    static let partitionWindowDays = -8...1

    /// The tables partitioned by day (`<table>_YYYYMMDD`, `<table>_default`).
    static let dayPartitioned = ["payload_raw", "diagnostics", "diagnostic_frames"]

    /// Creates the partitions of `day` (`YYYY-MM-DD`) of every day-partitioned table, if the day is
    /// in the window around `today` and they are missing; one node at a time (advisory lock),
    /// outside the ingest transaction.
    func ensurePartition(day: String, today: UTCDay) async throws {
        guard let date = UTCDay(day), Self.partitionWindowDays.contains(date.ordinal - today.ordinal),
            partitions.withLock({ !$0.contains(day) })
        else { return }
        guard let next = UTCDay(ordinal: date.ordinal + 1) else { return }
        let suffix = day.replacingOccurrences(of: "-", with: "")
        try await client.withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.partitionLock))", logger: logger)
                for table in Self.dayPartitioned {
                    let name = "\(table)_\(suffix)"
                    let exists =
                        try await connection.query(
                            "SELECT 1 FROM pg_class WHERE relname = \(name)", logger: logger
                        ).collect().isEmpty == false
                    guard !exists else { continue }
                    // A day already in the default partition keeps its rows there (a new partition
                    // for it would be refused): retention deletes them from the default partition.
                    let inDefault =
                        try await connection.query(
                            PostgresQuery(
                                unsafeSQL: "SELECT 1 FROM \(table)_default WHERE day = $1::date LIMIT 1",
                                binds: {
                                    var binds = PostgresBindings()
                                    binds.append(day)
                                    return binds
                                }()), logger: logger
                        ).collect().isEmpty == false
                    guard !inDefault else { continue }
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL:
                                "CREATE TABLE \(name) PARTITION OF \(table) FOR VALUES FROM ('\(day)') TO ('\(next.string)')"
                        ), logger: logger)
                }
            }
        }
        partitions.withLock { _ = $0.insert(day) }
    }

    /// The day partitions of `table` present, by day (oldest first).
    package func partitions(of table: String = "payload_raw") async throws -> [String] {
        var days: [String] = []
        let rows = try await client.query(
            """
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = \(table) ORDER BY 1
            """, logger: logger)
        let prefix = table + "_"
        for try await name in rows.decode(String.self) where name.hasPrefix(prefix) {
            let digits = Array(name.dropFirst(prefix.count))
            guard digits.count == 8, digits.allSatisfy(\.isNumber) else { continue }
            days.append("\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))")
        }
        return days
    }
}
