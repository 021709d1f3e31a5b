import LifelineIngest
import Foundation
import LifelineStorage
import Logging
import ServiceLifecycle

/// The single writer of ingested documents, with group commit.
///
/// It owns one write connection used on a dedicated thread (SQLite calls block, so they stay off
/// the Swift concurrency pool). Concurrent ``submit(_:)`` calls queue up; the thread takes
/// everything queued (up to ``Options/maxBatchRequests`` / ``Options/maxBatchItems``), writes it
/// in one transaction with one savepoint per request, commits, and only then answers: a returned
/// outcome is durable.
///
/// The thread starts in `init`. As a `Service`, ``run()`` waits for graceful shutdown and then
/// drains the queue and closes; without a service group call ``shutdown()`` (or use
/// ``withWriter(database:options:logger:_:)``).
package final class IngestWriter: Service, Sendable {
    /// Batch limits.
    package struct Options: Sendable, Equatable {
        /// Most requests written in one transaction.
        package var maxBatchRequests: Int = 256
        /// Most items written in one transaction (a single larger request still goes alone).
        package var maxBatchItems: Int = 4_096
        /// Aggregator: most documents folded in one transaction.
        package var foldBatch: Int = 4_096
        /// Aggregator: fold at the latest when the oldest unfolded document is this old, seconds
        /// (it also folds whenever the door is idle, and at once when a reader waits).
        package var foldDelay: Double = 0.25
        /// Aggregator: the explorer's rows are held in memory across folds and written at the
        /// latest this many seconds after the oldest held document (at once when a reader waits;
        /// ``ExplorerStage``). 0: written at every fold. `nil`: the database's
        /// ``StorageOptions/explorerWriteSeconds``.
        package var explorerDelay: Double?
        /// Aggregator: the explorer's version rows and the version-level rollups, kept in memory
        /// between writes (while the explorer's rows are held), are written at the latest this many
        /// seconds after the first went there (``ExplorerStage/Deferral``,
        /// ``RollupStage/Deferral``); `nil`: ``StorageOptions/explorerVersionSeconds``.
        package var explorerVersionDelay: Double?
        /// Aggregator: the explorer's version rows held unsealed at most
        /// (``ExplorerStage/Deferral/versionMaxRows``); `nil`: the database's
        /// ``StorageOptions/explorerVersionRows``.
        package var explorerVersionRows: Int?
        /// Aggregator: fine rows the explorer's prepare reads before it may write the rest unread
        /// (``ExplorerWorker/defaultFineProbe``); `nil`: that default. Tests set 0, so every fine
        /// row goes through the writer's SQL merge.
        package var explorerFineProbe: Int?
        /// Aggregator: cached explorer rows a fold writes at most once it has written one part
        /// (``ExplorerStage/Deferral/cacheRowsPerFold``); `nil`: that default. Tests set 0, so a
        /// fold writes one part and the parts' watermarks part ways.
        package var explorerCacheRowsPerFold: Int?
        /// Aggregator: the rollup cells kept in memory past which a part is written whatever its
        /// age (``RollupStage/Deferral/maxCells``); `nil`: that default. Tests set 1, so a fold
        /// writes one part (the largest) and the parts' watermarks part ways.
        package var rollupMaxCells: Int?
        /// The WAL's hard cap, in pages: past it the writer itself truncates the log after its
        /// commit, waiting for the readers (``WALLimit``).
        package var walHardCapPages: Int = 2 * IngestWriter.safetyCheckpointPages

        package init(maxBatchRequests: Int = 256, maxBatchItems: Int = 4_096, foldBatch: Int = 4_096) {
            self.maxBatchRequests = max(1, maxBatchRequests)
            self.maxBatchItems = max(1, maxBatchItems)
            self.foldBatch = max(1, foldBatch)
        }
    }

    private let shared: WriterQueue
    /// The database (for what is written beside the writer's queue: bodies kept raw).
    let database: Database
    private let progress: FoldProgress
    /// Told the number of requests of every committed batch (besides `onBatch`).
    package let batches = BatchObserver()
    private let logger: Logger
    /// SQLite's automatic checkpoint threshold on the writer's connection, and the WAL's cap
    /// (``Checkpointer``), in WAL pages.
    static let safetyCheckpointPages = 16_000
    /// How long the checkpointer waits for readers and the writer when it truncates the WAL.
    static let checkpointBusyMilliseconds: Int32 = 50
    /// The page cache of the explorer worker's read connection, in KiB.
    static let explorerReaderCacheKiB = 4_096
    /// The writer connection's page cache, in KiB (readers keep the 32 MiB every connection gets:
    /// the fine-level explorer query over 200,000 payloads took 30 ms instead of 23 with 16).
    /// With the fine rollups held and written in key order (migration 0024), 16 MiB ingested as
    /// fast as 32 on the reference load, fresh (2,381 against 2,377 payloads/s over three rounds)
    /// and over 200,000 stored payloads, for a peak RSS 12–27 MB lower (BENCHMARKS.md).
    static let writerCacheKiB = 16_384

    /// Opens a write connection to `database`'s file, checks the schema is current, and starts the thread.
    /// `onBatch` is told the number of requests of every batch written (on the writer thread: keep it cheap).
    package init(
        database: Database, options: Options = Options(), logger: Logger = Logger(label: "lifeline.store.writer"),
        onBatch: (@Sendable (Int) -> Void)? = nil
    ) throws(StoreError) {
        let connection = try database.openConnection()
        try Migrator(migrations: EmbeddedMigrations.all, now: { 0 }).requireCurrent(connection)
        self.logger = logger
        self.database = database
        let batches = self.batches
        self.shared = WriterQueue(options: options) { requests in
            batches.batchCommitted(requests: requests)
            onBatch?(requests)
        }
        // Checkpoints run beside the writer (see Checkpointer); SQLite's own stays as a safety net
        // far above the usual WAL size.
        _ = try connection.query("PRAGMA wal_autocheckpoint = \(Self.safetyCheckpointPages)") { $0.int64(0) }
        try connection.execute("PRAGMA cache_size = -\(Self.writerCacheKiB)")
        // The checkpointer waits for readers and the writer 50 ms at most when it truncates the
        // log (the writer waits on it meanwhile).
        let checkpointer = Checkpointer(
            connection: try database.openConnection(busyTimeoutMilliseconds: Self.checkpointBusyMilliseconds),
            capPages: Self.safetyCheckpointPages, logger: logger)
        let delay = options.explorerDelay ?? database.options.explorerWriteSeconds
        var deferral = delay > 0 ? ExplorerStage.Deferral(maxAge: .seconds(delay)) : nil
        let versionSeconds = options.explorerVersionDelay ?? database.options.explorerVersionSeconds
        deferral?.versionMaxAge = .seconds(versionSeconds)
        deferral?.versionMaxRows = max(0, options.explorerVersionRows ?? database.options.explorerVersionRows)
        if let probe = options.explorerFineProbe { deferral?.fineProbe = probe }
        if let rows = options.explorerCacheRowsPerFold { deferral?.cacheRowsPerFold = rows }
        let shared = self.shared
        // The explorer's worker reads only the rows it is about to write: a small page cache, not
        // the 32 MiB every connection gets, which it filled over a sustained load (BENCHMARKS.md).
        let reader = try deferral.map { _ throws(StoreError) in try Self.smallReader(database) }
        let batchWriter = BatchWriter(
            connection: connection,
            foldStages: DefaultStages.make(
                explorer: deferral,
                rollups: deferral.map {
                    var rollups = RollupStage.Deferral(maxAge: $0.versionMaxAge)
                    if let cells = options.rollupMaxCells { rollups.maxCells = max(1, cells) }
                    return rollups
                },
                reader: reader, onPrepared: { shared.wake() }))
        // What the last run acknowledged and did not fold is folded from the raw copies first.
        let start = try batchWriter.foldState()
        self.progress = database.fold
        database.fold.attach(
            acknowledged: start.head, folded: start.folded, explorer: start.explorer, pending: start.pending
        ) {
            shared.wake()
        }
        if start.pending > 0 {
            logger.info(
                "folding documents acknowledged before the last stop",
                metadata: ["documents": "\(start.pending)", "watermark": "\(start.folded)"])
        }
        let pageSize = try connection.first("PRAGMA page_size", []) { $0.int64(0) } ?? 8_192
        let walLimit = WALLimit(path: database.path + "-wal", bytes: options.walHardCapPages * Int(pageSize))
        // When the log restarts (the checkpointer's cap), a file grown past the cap meanwhile is cut
        // back to it; up to it, the file is kept and written over.
        _ = try connection.query("PRAGMA journal_size_limit = \(Self.safetyCheckpointPages * Int(pageSize))") {
            $0.int64(0)
        }
        let owned = OwnedWriter(writer: batchWriter)
        let progress = database.fold
        // Raw copies re-deflated behind the fold (migration 0023), prepared beside the writer.
        let compaction =
            try database.options.rawCompaction
            ? RawCompactionWorker(
                reader: Self.smallReader(database), logger: logger, onReady: { shared.wake() }) : nil
        let thread = Thread {
            WriterQueue.loop(
                shared, owned.writer, progress: progress, checkpointer: checkpointer, walLimit: walLimit,
                compaction: compaction, logger: logger)
        }
        thread.name = "lifeline-writer"
        thread.start()
    }

    deinit {
        shared.beginShutdown(waiter: nil)
    }

    /// A connection of `database` with a small page cache (``explorerReaderCacheKiB``), for the
    /// explorer's and the compactor's reads beside the writer.
    private static func smallReader(_ database: Database) throws(StoreError) -> Connection {
        let reader = try database.openConnection()
        try reader.execute("PRAGMA cache_size = -\(Self.explorerReaderCacheKiB)")
        return reader
    }

    /// Queues `request` and returns once it is durably written (or failed).
    ///
    /// Throws ``StoreError/Code/unavailable`` when the storage fails or the writer is shut down,
    /// ``StoreError/Code/invalid`` when this request was rejected (others in the batch still commit).
    package func submit(_ request: IngestRequest) async throws(StoreError) -> IngestOutcome {
        let result = await withCheckedContinuation { continuation in
            shared.enqueue(request, continuation)
        }
        return try result.get()
    }

    /// Whether ``submit(_:)`` is accepted (false once shutdown began).
    package var isAccepting: Bool { shared.isAccepting }

    /// Counters so far.
    package var statistics: WriterStatistics {
        var statistics = shared.statistics
        statistics.aggregationLagDocuments = progress.lagDocuments
        statistics.aggregationExplorerHeldDocuments = progress.explorerHeldDocuments
        statistics.aggregationLagSeconds = progress.lagSeconds
        return statistics
    }

    /// Returns once every document acknowledged so far is folded into the figures.
    package func waitForFold(timeout: Double = 60) async throws(StoreError) {
        try await progress.waitForFold(timeout: timeout)
    }

    /// Runs until graceful shutdown (or cancellation), then writes what is queued and closes.
    package func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops accepting requests, writes everything already queued, closes the connection, and
    /// returns when the thread has ended. Idempotent.
    package func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            shared.beginShutdown(waiter: continuation)
        }
        logger.debug("ingest writer stopped", metadata: ["transactions": "\(statistics.transactions)"])
    }

    /// Runs `body` with a started writer and shuts it down afterwards (for CLI commands and tests).
    package static func withWriter<R: Sendable>(
        database: Database, options: Options = Options(), logger: Logger = Logger(label: "lifeline.store.writer"),
        _ body: (IngestWriter) async throws -> R
    ) async throws -> R {
        let writer = try IngestWriter(database: database, options: options, logger: logger)
        do {
            let result = try await body(writer)
            await writer.shutdown()
            return result
        } catch {
            await writer.shutdown()
            throw error
        }
    }
}

/// Hands the writer's connection to its thread; only that thread uses it afterwards.
private final class OwnedWriter: @unchecked Sendable {
    let writer: BatchWriter
    init(writer: BatchWriter) { self.writer = writer }
}
