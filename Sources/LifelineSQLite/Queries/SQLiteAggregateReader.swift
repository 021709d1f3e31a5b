import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// ``AggregateReader`` over a leased read connection inside its read transaction: each call runs
/// the synchronous ``SQLiteRollupReader`` on a reader thread (``StoreThreads/reads``), so the
/// cooperative pool never waits on SQLite, and a request's queries share one snapshot.
struct SQLiteAggregateReader: AggregateReader {
    let lease: ReadPool.Lease
    let names: DimensionNames
    let symbols: SymbolSource?
    /// Whether the read waited for the explorer's rows (``ReadFreshness/readsExplorer``): when it
    /// did not, the writer may hold some of them, and an explorer read fails.
    var readsExplorer = true

    /// Runs `query` with the rollup reader of this transaction on a reader thread, within the
    /// read's budget (``ReadBudget/current``): rows counted, the statement interrupted at the deadline.
    private func onReader<T: Sendable>(_ query: @escaping @Sendable (SQLiteRollupReader) throws -> T) async throws -> T
    {
        let (lease, names, symbols) = (self.lease, self.names, self.symbols)
        let budget = ReadBudget.current
        return try await StoreThreads.reads.runIfActive {
            try lease.connection.bounded(by: budget) {
                try query(SQLiteRollupReader(connection: lease.connection, names: names, symbols: symbols))
            }
        }
    }

    func apps() async throws -> [AppInfo] { try await onReader { try $0.apps() } }

    func hasApp(_ bundleID: String) async throws -> Bool { try await onReader { try $0.hasApp(bundleID) } }

    func usage(_ scope: Scope) async throws -> [UsageRow] { try await onReader { try $0.usage(scope) } }

    func exits(_ scope: Scope) async throws -> [ExitRow] { try await onReader { try $0.exits(scope) } }

    func signposts(_ scope: Scope, categories: [String]) async throws -> [SignpostRow] {
        try await onReader { try $0.signposts(scope, categories: categories) }
    }

    func buckets(_ scope: Scope, source: HistogramSource) async throws -> [BucketRow] {
        try await onReader { try $0.buckets(scope, source: source) }
    }

    func diagnostics(_ scope: Scope) async throws -> [DiagnosticRow] {
        try await onReader { try $0.diagnostics(scope) }
    }

    func explorerCells(_ scope: Scope, metrics: [String]) async throws -> [ExplorerCellRow] {
        guard readsExplorer else {
            throw StoreError(
                .internal, "internal storage error", cause: "explorer rows read by a read that did not wait for them")
        }
        return try await onReader { try $0.explorerCells(scope, metrics: metrics) }
    }

    func crashGroups(app: String, ids: [Int64]) async throws -> [CrashGroupInfo] {
        try await onReader { try $0.crashGroups(app: app, ids: ids) }
    }

    func missingSymbols(app: String, limit: Int) async throws -> [MissingSymbols] {
        try await onReader { try $0.missingSymbols(app: app, limit: limit) }
    }
}
