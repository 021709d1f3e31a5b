import LifelineModel

/// Percentiles estimated from MetricKit histogram buckets.
///
/// MetricKit only reports bucket counts, so an exact percentile is unknowable. Lifeline merges
/// the buckets of every payload in scope (same start and end → counts added), sorts them by
/// start, finds the bucket holding the wanted rank, and interpolates linearly inside it, as if
/// its samples were spread evenly between start and end: `p = start + (end − start) × (rank −
/// below) / count`. A bucket whose start equals its end gives that value exactly.
package struct BucketDistribution: Sendable, Equatable {
    /// One merged bucket, in the histogram's canonical unit (ms for durations).
    package struct Bucket: Sendable, Equatable, Hashable {
        package var start: Double
        package var end: Double
        package var count: Int64

        package init(start: Double, end: Double, count: Int64) {
            self.start = start
            self.end = end
            self.count = count
        }
    }

    /// Buckets sorted by start (then end), counts of identical bounds merged, empty ones dropped.
    package private(set) var buckets: [Bucket]

    package init(_ buckets: some Sequence<Bucket>) {
        // A histogram as MetricKit sends it is already in this form: taken as it is.
        let given = Array(buckets)
        if Self.isCanonical(given) {
            self.buckets = given
            return
        }
        var merged: [Bound: Int64] = [:]
        for bucket in given where bucket.count > 0 {
            merged[Bound(start: bucket.start, end: bucket.end), default: 0].addSaturating(bucket.count)
        }
        self.buckets = merged.map { Bucket(start: $0.key.start, end: $0.key.end, count: $0.value) }
            .sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    }

    /// Whether `buckets` is what ``init(_:)`` makes of it: counts > 0, bounds strictly increasing
    /// by (start, end) (so no two are equal, and none is NaN).
    package static func isCanonical(_ buckets: [Bucket]) -> Bool {
        var previous: Bucket?
        for bucket in buckets {
            guard bucket.count > 0 else { return false }
            if let previous, !((previous.start, previous.end) < (bucket.start, bucket.end)) { return false }
            previous = bucket
        }
        return true
    }

    private struct Bound: Hashable {
        var start: Double
        var end: Double
    }

    /// Number of samples.
    package var count: Int64 { buckets.lazy.map(\.count).saturatingSum() }

    /// The `q`-quantile (0…1) by linear interpolation inside the bucket holding rank `q × count`;
    /// `nil` without samples.
    package func percentile(_ q: Double) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        let rank = min(max(q, 0), 1) * Double(total)
        var below: Double = 0
        for bucket in buckets {
            let next = below + Double(bucket.count)
            if rank <= next {
                let fraction = (rank - below) / Double(bucket.count)
                return bucket.start + (bucket.end - bucket.start) * fraction
            }
            below = next
        }
        return buckets.last.map(\.end)
    }

    /// Mean using bucket midpoints; `nil` without samples.
    package var mean: Double? {
        let total = count
        guard total > 0 else { return nil }
        let sum = buckets.reduce(0.0) { $0 + ($1.start + $1.end) / 2 * Double($1.count) }
        return sum / Double(total)
    }
}
