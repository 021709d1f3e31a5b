#if canImport(Glibc)
    import Glibc
#endif
import Foundation

/// glibc's malloc settings for the server process.
enum MallocArenas {
    /// The arenas glibc may make, unless the operator set `MALLOC_ARENA_MAX` (glibc reads it
    /// itself): 2 instead of 8 per core. The explorer's thread allocates and frees its rows in an
    /// arena of its own, which glibc kept: over 35 s of the reference load the server peaked at
    /// 150–168 MB with the default and 120–131 MB with two arenas, at ~0.95× the rate
    /// (BENCHMARKS.md, "Two malloc arenas").
    static let limit: Int32 = 2

    /// A PostgreSQL node's arenas: one. The same leader peaked at 216–220 MB under the reference
    /// load with two arenas and at 188–193 MB with one, at the same door rate (BENCHMARKS.md, "A
    /// PostgreSQL node's malloc").
    static let postgresLimit: Int32 = 1

    /// A PostgreSQL node's fixed mmap threshold (unless `MALLOC_MMAP_THRESHOLD_` is set): blocks of
    /// 128 KiB and more are mapped on their own and returned whole when freed. glibc's default
    /// starts there but rises to the largest block freed, after which the fold's buffers of
    /// several megabytes stay in the heap.
    static let postgresMmapThreshold: Int32 = 131_072

    /// Applies ``limit`` (or, for a PostgreSQL node, ``postgresLimit`` and
    /// ``postgresMmapThreshold``) through glibc's `mallopt`; call before the server's threads
    /// start. Swift's Glibc module does not export `<malloc.h>`, so the function is looked up by
    /// name; elsewhere (another C library) this does nothing.
    static func apply(postgres: Bool) {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")  // RTLD_DEFAULT
            else { return }
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            let environment = ProcessInfo.processInfo.environment
            if environment["MALLOC_ARENA_MAX"] == nil {
                _ = mallopt(arenaMaxParameter, postgres ? postgresLimit : limit)
            }
            if postgres, environment["MALLOC_MMAP_THRESHOLD_"] == nil {
                _ = mallopt(mmapThresholdParameter, postgresMmapThreshold)
            }
        #endif
    }

    /// glibc's `M_ARENA_MAX` (`<malloc.h>`).
    private static let arenaMaxParameter: Int32 = -8
    /// glibc's `M_MMAP_THRESHOLD` (`<malloc.h>`).
    private static let mmapThresholdParameter: Int32 = -3
}
