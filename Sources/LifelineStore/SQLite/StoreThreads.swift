import NIOPosix

/// The dedicated threads every blocking SQLite call of a server runs on, so none runs on Swift's
/// cooperative pool (two threads on a two-core machine: one slow query there would stall every
/// request). Readers get their own pool, sized like ``ReadPool``, so a heavy report never waits
/// behind key lookups or alert writes, and the reverse. The ingest writer has its own thread
/// (``IngestWriter``). The pools live as long as the process (static, started once).
enum StoreThreads {
    /// Read transactions (``Database/read(_:)``): one thread per pooled read connection.
    static let reads = started(ReadPool.defaultSize)
    /// Everything on the database's own connection (``Database/write(_:)``): keys, sessions,
    /// alert state, health checks. Two threads: the connection's mutex serialises them anyway.
    static let writes = started(2)

    private static func started(_ threads: Int) -> NIOThreadPool {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }
}
