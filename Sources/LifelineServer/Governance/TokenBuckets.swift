import Synchronization

/// Token buckets by name (an ingest key's id, a client address): `rate` tokens a second up to
/// `burst`; a request takes one. Thread-safe, memory bounded: at most ``maxBuckets`` names are
/// tracked, and when that is reached the buckets that have refilled completely (indistinguishable
/// from new ones) are forgotten first, then the whole table.
package final class TokenBuckets: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    package let rate: Double
    package let burst: Double
    package let maxBuckets: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    /// `rate` ≤ 0 disables the limit.
    package init(rate: Double, burst: Double, maxBuckets: Int = 100_000) {
        self.rate = rate
        self.burst = max(1, burst)
        self.maxBuckets = max(1, maxBuckets)
    }

    /// Takes a token for `name`: `nil` when allowed, else the seconds until one is available.
    package func take(_ name: String, now: ContinuousClock.Instant = .now) -> Int? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets in
            var bucket = buckets[name] ?? Bucket(tokens: burst, updated: now)
            let elapsed = bucket.updated.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
            bucket.updated = now
            if buckets[name] == nil, buckets.count >= maxBuckets { forgetFull(&buckets, now: now) }
            guard bucket.tokens >= 1 else {
                buckets[name] = bucket
                return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            buckets[name] = bucket
            return nil
        }
    }

    private func forgetFull(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant) {
        let refill = (burst / rate)
        buckets = buckets.filter { _, bucket in
            let elapsed = bucket.updated.duration(to: now)
            return Double(elapsed.components.seconds) < refill
        }
        if buckets.count >= maxBuckets { buckets.removeAll(keepingCapacity: true) }
    }
}
