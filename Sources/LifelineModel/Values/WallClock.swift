#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real-time clock, in epoch units.
package enum WallClock {
    /// Seconds since 1970-01-01 UTC.
    package static func nowSeconds() -> Int64 { nowMilliseconds() / 1_000 }

    /// Milliseconds since 1970-01-01 UTC.
    package static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
