#if canImport(Glibc)
    import Glibc
#endif
import Foundation

/// glibc's malloc arenas for the server process.
enum MallocArenas {
    /// The arenas glibc may make, unless the operator set `MALLOC_ARENA_MAX` (glibc reads it
    /// itself): 2 instead of 8 per core. The explorer's thread allocates and frees its rows in an
    /// arena of its own, which glibc kept: over 35 s of the reference load the server peaked at
    /// 150–168 MB with the default and 120–131 MB with two arenas, at ~0.95× the rate
    /// (BENCHMARKS.md, "Two malloc arenas").
    static let limit: Int32 = 2

    /// Applies ``limit`` through glibc's `mallopt(M_ARENA_MAX, …)`; call before the server's
    /// threads start. Swift's Glibc module does not export `<malloc.h>`, so the function is looked
    /// up by name; elsewhere (another C library) this does nothing.
    static func apply() {
        #if canImport(Glibc)
            guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil,
                let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")  // RTLD_DEFAULT
            else { return }
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            _ = mallopt(arenaMaxParameter, limit)
        #endif
    }

    /// glibc's `M_ARENA_MAX` (`<malloc.h>`).
    private static let arenaMaxParameter: Int32 = -8
}
