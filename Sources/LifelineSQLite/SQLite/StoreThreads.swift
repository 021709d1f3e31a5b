import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The dedicated threads every blocking SQLite call of a server runs on, so none runs on Swift's
/// cooperative pool (two threads on a two-core machine: one slow query there would stall every
/// request). Readers get their own pool, sized like ``ReadPool``, so a heavy report never waits
/// behind key lookups or alert writes, and the reverse. The ingest writer has its own thread
/// (``IngestWriter``). The pools live as long as the process (static, started once).
enum StoreThreads {
    /// Read transactions (``Database/read(_:)``): one thread per pooled read connection.
    static let reads = started(ReadPool.defaultSize)
    /// Everything on the database's own connection (``Database/onStoreThread(_:)``): keys, sessions,
    /// alert state, health checks. Two threads: the connection's mutex serialises them anyway.
    static let writes = started(2)

    /// How much lower than the rest of the process reader threads run (`nice`, Linux): an
    /// aggregate query that takes seconds of CPU yields the cores to ingest (decode, writer),
    /// whose acknowledgements are what devices wait on, instead of halving its throughput.
    static let readerNiceness: Int32 = 10

    /// Lowers the calling reader thread's CPU priority to ``readerNiceness`` (a no-op once done,
    /// and where threads have no priority of their own).
    static func lowerReaderPriority() {
        #if canImport(Glibc)
            // On Linux, PRIO_PROCESS with who = 0 names the calling thread only.
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            if getpriority(which, 0) < readerNiceness { _ = setpriority(which, 0, readerNiceness) }
        #endif
    }

    private static func started(_ threads: Int) -> NIOThreadPool {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }
}
