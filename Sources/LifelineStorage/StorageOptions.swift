/// How a store is opened (`database:` and `symbols:` of the config file). The SQLite knobs are
/// ignored by the PostgreSQL store; the symbol settings apply to both.
package struct StorageOptions: Sendable, Equatable {
    /// `PRAGMA synchronous`: ``Synchronous/full`` (default) makes every commit durable
    /// across power loss; ``Synchronous/normal`` only across process crashes.
    package var synchronous: Synchronous = .full
    /// How long a connection waits for a lock before failing with ``StoreError/Code/unavailable``.
    package var busyTimeoutMilliseconds: Int32 = 5_000
    /// Page size of a newly created file (ignored for existing files). Large pages keep the
    /// ~2 KB compressed raw documents densely packed.
    package var pageSize: Int = 32_768
    /// Test hook: `PRAGMA max_page_count`, to simulate a full disk (SQLITE_FULL).
    package var maxPageCount: Int?
    /// Directory of the debug symbol files (`symbols.directory`); nil: `<database>.symbols/`.
    package var symbolDirectory: String?
    /// The `llvm-symbolizer` to run (`symbols.llvm_symbolizer`); nil: found on `PATH`.
    package var llvmSymbolizer: String?
    /// The longest a request waits on the database (`database.timeout_seconds`, default 5): a
    /// connection, a statement, a lock. Past it ingest answers 503 `database_unavailable` with
    /// `Retry-After`, reads 503 too; `/readyz` waits at most 1 s.
    package var timeoutSeconds: Int = 5

    /// ``timeoutSeconds`` as a duration.
    package var timeout: Duration { .seconds(max(1, timeoutSeconds)) }

    package init(
        synchronous: Synchronous = .full, busyTimeoutMilliseconds: Int32 = 5_000, pageSize: Int = 32_768,
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
