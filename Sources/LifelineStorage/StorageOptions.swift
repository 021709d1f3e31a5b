/// How a store is opened (`database:` and `symbols:` of the config file). The SQLite knobs are
/// ignored by the PostgreSQL store; the symbol settings apply to both.
package struct StorageOptions: Sendable, Equatable {
    /// `PRAGMA synchronous`: ``Synchronous/full`` (default) makes every commit durable
    /// across power loss; ``Synchronous/normal`` only across process crashes.
    package var synchronous: Synchronous = .full
    /// How long a connection waits for a lock before failing with ``StoreError/Code/unavailable``.
    package var busyTimeoutMilliseconds: Int32 = 5_000
    /// Page size of a newly created file (ignored for existing files). 8 KB since the aggregator
    /// stage (issue 25): every COMMIT writes each page it touched whole to the WAL, and a new
    /// document touches pages at random (its dedup index entry, its rollup cells), so smaller
    /// pages write a quarter of the bytes of 32 KB ones (93 vs 197 KB per reference payload) and
    /// ingest 17 % more, for 4 % more bytes stored (BENCHMARKS.md).
    package var pageSize: Int = 8_192
    /// Test hook: `PRAGMA max_page_count`, to simulate a full disk (SQLITE_FULL).
    package var maxPageCount: Int?
    /// Directory of the debug symbol files (`symbols.directory`); nil: `<database>.symbols/`.
    package var symbolDirectory: String?
    /// The `llvm-symbolizer` to run (`symbols.llvm_symbolizer`); nil: found on `PATH`.
    package var llvmSymbolizer: String?
    /// How long `llvm-symbolizer` may take to answer one address (`symbols.symbolizer_timeout_seconds`,
    /// default 10: a large dSYM's first request parses it) before its process is killed and the
    /// file marked unusable (`timed_out`).
    package var symbolizerTimeoutSeconds: Double = 10
    /// Bounds on an uploaded or imported zip of dSYMs (`symbols.max_zip_entries`,
    /// `symbols.max_extracted_bytes`, `symbols.max_compression_ratio`, `symbols.upload_cpu_seconds`).
    package var symbolArchive = SymbolArchiveLimits()
    /// The longest a request waits on the database (`database.timeout_seconds`, default 5): a
    /// connection, a statement, a lock. Past it ingest answers 503 `database_unavailable` with
    /// `Retry-After`, reads 503 too; `/readyz` waits at most 1 s.
    package var timeoutSeconds: Int = 5
    /// SQLite: the longest the writer holds the explorer's rows in memory before it writes them,
    /// seconds (`database.explorer_write_seconds`; 0 writes them at every fold). Longer folds more
    /// documents into each write (more ingest) and makes each write longer (a slower p99).
    package var explorerWriteSeconds: Double = 1
    /// SQLite: the explorer's version-level rows the writer holds unsealed at most
    /// (`database.explorer_version_rows`; 0 seals them with the fine rows). Above 0 they gather
    /// documents in memory, as bytes, until their part is sealed (each every
    /// ``explorerVersionSeconds``): less work per payload for more memory. 24,576 (the default)
    /// holds every version row the reference load touches in 4 s and most of the iOS 27 load's,
    /// within the 150 MB target (BENCHMARKS.md, "The explorer's rows pending as bytes", "Version
    /// rows written less often").
    package var explorerVersionRows: Int = 24_576
    /// SQLite: how often each held version row is merged into its stored bytes and written, seconds
    /// (`database.explorer_version_seconds`, 0…60, default 4; the rollups' version-level cells are
    /// written as often). Longer writes fewer bytes per document (2 s wrote 49 KB per iOS 27
    /// report, 4 s 39 KB), makes a restart replay up to this long of documents into them, and
    /// makes an explorer read beside a full-speed load (which writes what is held first) wait for
    /// more rows (BENCHMARKS.md, "Version rows written less often").
    package var explorerVersionSeconds: Double = 4
    /// SQLite: whether the server re-deflates raw copies against a preset dictionary per app and
    /// kind behind the fold, when the door is idle (`database.raw_compaction`, default true;
    /// migration 0023). `lifeline compact` does it offline either way.
    package var rawCompaction: Bool = true

    /// ``symbolizerTimeoutSeconds`` as a duration (at least a millisecond).
    package var symbolizerTimeout: Duration {
        let milliseconds = symbolizerTimeoutSeconds * 1_000
        guard milliseconds.isFinite else { return .seconds(10) }
        return .milliseconds(Int64(min(max(milliseconds, 1), 86_400_000)))
    }

    /// A symbolicator with ``llvmSymbolizer`` (or the one on `PATH`) and ``symbolizerTimeout``;
    /// nil when there is none.
    package func makeSymbolicator() -> Symbolicator? {
        Symbolicator(executable: llvmSymbolizer, requestTimeout: symbolizerTimeout)
    }

    /// ``timeoutSeconds`` as a duration.
    package var timeout: Duration { .seconds(max(1, timeoutSeconds)) }

    package init(
        synchronous: Synchronous = .full, busyTimeoutMilliseconds: Int32 = 5_000, pageSize: Int = 8_192,
        maxPageCount: Int? = nil, symbolDirectory: String? = nil, llvmSymbolizer: String? = nil
    ) {
        self.synchronous = synchronous
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.pageSize = pageSize
        self.maxPageCount = maxPageCount
        self.symbolDirectory = symbolDirectory
        self.llvmSymbolizer = llvmSymbolizer
    }

    /// `PRAGMA synchronous` levels offered.
    package enum Synchronous: String, Sendable, Equatable {
        case full = "FULL"
        case normal = "NORMAL"
    }
}
