import LifelineServer
import Testing

/// The rate limiter's arithmetic on explicit instants: how a key runs out, what Retry-After it is
/// told, and how it recovers (the HTTP side is ``GovernanceTests``).
@Suite("Token buckets: burst, refill, Retry-After, bounded memory")
struct TokenBucketsTests {
    static let start = ContinuousClock.now

    static func at(_ seconds: Double) -> ContinuousClock.Instant {
        start.advanced(by: .milliseconds(Int64(seconds * 1_000)))
    }

    @Test("a burst of 2 at 0.5/s: two taken, the third told 2 s; one more after 2 s, not before")
    func burstThenRefill() {
        let buckets = TokenBuckets(rate: 0.5, burst: 2)
        #expect(buckets.take("key", now: Self.at(0)) == nil)
        #expect(buckets.take("key", now: Self.at(0)) == nil)
        #expect(buckets.take("key", now: Self.at(0)) == 2)
        // Refused takes cost nothing: half a token after 1 s, so 1 s more to wait.
        #expect(buckets.take("key", now: Self.at(1)) == 1)
        #expect(buckets.take("key", now: Self.at(2)) == nil)
        #expect(buckets.take("key", now: Self.at(2)) == 2)
        // Another name has its own bucket.
        #expect(buckets.take("other", now: Self.at(2)) == nil)
        // A long pause refills to the burst, no further.
        #expect(buckets.take("key", now: Self.at(1_000)) == nil)
        #expect(buckets.take("key", now: Self.at(1_000)) == nil)
        #expect(buckets.take("key", now: Self.at(1_000)) == 2)
    }

    @Test("Retry-After is whole seconds rounded up, at least 1")
    func retryAfterRounding() {
        let slow = TokenBuckets(rate: 1.0 / 3_600, burst: 1)
        #expect(slow.take("key", now: Self.at(0)) == nil)
        #expect(slow.take("key", now: Self.at(0)) == 3_600)
        #expect(slow.take("key", now: Self.at(0.5)) == 3_600)
        #expect(slow.take("key", now: Self.at(1.5)) == 3_599)
        let fast = TokenBuckets(rate: 100, burst: 1)
        #expect(fast.take("key", now: Self.at(0)) == nil)
        #expect(fast.take("key", now: Self.at(0)) == 1)
        #expect(fast.take("key", now: Self.at(0.02)) == nil)
    }

    @Test("a rate of 0 disables the limit")
    func disabled() {
        let buckets = TokenBuckets(rate: 0, burst: 1)
        for _ in 0..<1_000 { #expect(buckets.take("key", now: Self.at(0)) == nil) }
    }

    @Test("at most maxBuckets names: refilled buckets are forgotten first, then the whole table")
    func boundedMemory() {
        let buckets = TokenBuckets(rate: 1, burst: 1, maxBuckets: 3)
        #expect(buckets.take("old", now: Self.at(0)) == nil)
        #expect(buckets.take("drained", now: Self.at(5)) == nil)
        #expect(buckets.take("x", now: Self.at(5)) == nil)
        // The table is full; "old" has refilled (5 s ago) and makes room, "drained" is remembered.
        #expect(buckets.take("new", now: Self.at(5.5)) == nil)
        #expect(buckets.take("drained", now: Self.at(5.6)) == 1)
        // Full again with drained buckets only: the table is cleared, a forgotten name starts full.
        #expect(buckets.take("y", now: Self.at(5.7)) == nil)
        #expect(buckets.take("drained", now: Self.at(5.8)) == nil)
    }
}
