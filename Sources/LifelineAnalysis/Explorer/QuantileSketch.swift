import Foundation

/// A mergeable quantile sketch (DDSketch, Masson, Rim & Lee, VLDB 2019) of non-negative values,
/// the state a store keeps per group for a per-device-day value (peak memory, daily logical
/// writes, hang seconds per hour…) so that percentiles across device-days come from a fold, not
/// from the raw rows.
///
/// **Accuracy.** A positive value `x` falls in bucket `i = ⌈log_γ x⌉` with `γ = (1 + α) / (1 − α)`
/// and `α = 0.01`; every bucket answers `2γ^i / (γ + 1)`, which is within `α` (1 %) of every value
/// it holds. ``quantile(_:)`` returns the bucket of the element of rank `⌊q × (count − 1)⌋` (the
/// lower empirical quantile), clamped to [``min``, ``max``], so its answer is within 1 % relative
/// error of that exact element, whatever the distribution.
///
/// **Zero and negative values.** Zeros (a device-day without a hang) are counted apart
/// (``zeroCount``) and answer exactly 0. Negative, NaN and infinite values are refused (``add(_:count:)``
/// returns `false` and the sketch is unchanged): every MetricKit quantity is a duration, a size, a
/// count or a ratio, so a negative one is a corrupt value, never a measurement.
///
/// **Bounded size.** At most ``maxBuckets`` (2,048) buckets are kept. When the span of bucket
/// indexes would exceed it, the lowest buckets are collapsed into the lowest kept one, so the
/// high quantiles (p50, p90, p95: the ones reported) keep their 1 % guarantee and only quantiles
/// below the collapsed range lose it (they read high). 2,048 buckets at 1 % span a ratio of
/// `γ^2048 ≈ 6 × 10^17` between the smallest and the largest value kept, so no MetricKit figure
/// collapses in practice. Memory is at most 16 KiB; the ``encoded()`` form only stores non-empty
/// buckets.
///
/// **Few buckets spread wide are kept as pairs.** A sketch of a few device-days (a cell of the
/// explorer's rows held in memory) has a few buckets spread over a span of tens to hundreds: kept
/// dense, its counts took ten times the bytes of its encoding, most of what the held rows weighed
/// (BENCHMARKS.md, "The explorer's version rows held unsealed, and the sketch's sparse buckets").
/// Its non-empty buckets are kept as (index, count) pairs until the dense array would be no
/// larger, or past ``maxSparseBuckets``; the answers, the bytes and equality do not depend on
/// which form holds them.
///
/// **Merging** adds bucket counts. Collapsing depends only on the highest index, so merging is
/// exactly associative and commutative for ``count``, ``zeroCount``, buckets, ``min`` and ``max``:
/// the merge of sketches equals the sketch of the union. ``sum`` is a floating-point sum and may
/// differ in the last bits with the merge order.
package struct QuantileSketch: Sendable, Equatable {
    /// The relative accuracy α.
    package static let relativeAccuracy: Double = 0.01
    /// γ = (1 + α) / (1 − α).
    package static let gamma: Double = (1 + relativeAccuracy) / (1 - relativeAccuracy)
    /// The most buckets kept (see the type's documentation).
    package static let maxBuckets: Int = 2048
    /// Bucket indexes of every finite positive `Double` lie within ±`indexLimit`
    /// (`ln(Double.greatestFiniteMagnitude) / ln γ ≈ 35,490`; subnormals ≈ −37,200).
    package static let indexLimit: Int = 40_000

    private static let logGamma: Double = log(gamma)

    /// Non-empty buckets kept as pairs at most (see the type's documentation).
    static let maxSparseBuckets = 32
    /// Fewer pairs stay pairs even when dense counts would be no larger: a sketch of one or two
    /// device-days (most cells of a fine row) is not allocated twice.
    static let minDenseBuckets = 8

    /// Counts of the buckets `offset`, `offset + 1`, … (empty while there is no positive value, or
    /// while ``sparse`` holds them).
    private var counts: [UInt64] = []
    /// The index of `counts[0]`.
    private var offset: Int = 0
    /// The non-empty buckets ascending by index, while they are few and spread (then `counts` is
    /// empty).
    private var sparse: [(index: Int, count: UInt64)] = []
    /// Values equal to zero.
    package private(set) var zeroCount: UInt64 = 0
    /// Values added (zeros included), saturating at `UInt64.max`.
    package private(set) var count: UInt64 = 0
    /// The sum of the values added (capped at `Double.greatestFiniteMagnitude`).
    package private(set) var sum: Double = 0
    /// The smallest and largest values added (0 while empty; ``min`` and ``max`` say `nil`).
    private(set) var minimum: Double = 0
    private(set) var maximum: Double = 0

    /// An empty sketch.
    package init() {}

    /// A sketch of `values` (refused values skipped).
    package init(_ values: some Sequence<Double>) {
        for value in values { add(value) }
    }

    /// The smallest value added; `nil` when empty.
    package var min: Double? { count == 0 ? nil : minimum }
    /// The largest value added; `nil` when empty.
    package var max: Double? { count == 0 ? nil : maximum }
    /// `sum / count`; `nil` when empty.
    package var mean: Double? { count == 0 ? nil : sum / Double(count) }
    /// Whether nothing was added.
    package var isEmpty: Bool { count == 0 }

    /// The bucket index of a positive finite value.
    package static func index(of value: Double) -> Int {
        let raw = (log(value) / logGamma).rounded(.up)
        return Int(Swift.min(Swift.max(raw, -Double(indexLimit)), Double(indexLimit)))
    }

    /// The value a bucket answers: `2γ^i / (γ + 1)`, within α of everything in it.
    package static func value(ofIndex index: Int) -> Double {
        2 * exp(Double(index) * logGamma) / (gamma + 1)
    }

    /// Adds `value` `count` times. Returns `false` (and changes nothing) for a negative, NaN or
    /// infinite value; a `count` of 0 adds nothing.
    @discardableResult
    package mutating func add(_ value: Double, count n: UInt64 = 1) -> Bool {
        guard value.isFinite, value >= 0 else { return false }
        guard n > 0 else { return true }
        let v = value == 0 ? 0 : value  // −0 → +0
        mergeSummary(count: n, zeroCount: v == 0 ? n : 0, sum: v * Double(n), min: v, max: v)
        if v != 0 { addToBucket(Self.index(of: v), n) }
        return true
    }

    /// Adds everything of `other` to this sketch.
    package mutating func merge(_ other: QuantileSketch) {
        guard other.count > 0 else { return }
        mergeSummary(
            count: other.count, zeroCount: other.zeroCount, sum: other.sum, min: other.minimum, max: other.maximum)
        guard other.hasBuckets else { return }
        guard hasBuckets else {
            counts = other.counts
            offset = other.offset
            sparse = other.sparse
            return
        }
        guard sparse.isEmpty, other.sparse.isEmpty else {
            // Bucket by bucket: what adding each value ends with (collapsing depends on the highest
            // index only).
            other.forEachBucket { index, c in addToBucket(index, c) }
            return
        }
        // One array for the union of both spans, buckets under the collapse floor of the highest
        // index folded into it: what adding the buckets one by one ends with, in one allocation.
        let top = Swift.max(offset + counts.count, other.offset + other.counts.count) - 1
        let floor = Swift.max(Swift.min(offset, other.offset), top - Self.maxBuckets + 1)
        if floor == offset, top == offset + counts.count - 1 {
            for (k, c) in other.counts.enumerated() where c > 0 {
                let slot = Swift.max(other.offset + k, floor) - floor
                counts[slot] = counts[slot].addingSaturating(c)
            }
            return
        }
        var merged = [UInt64](repeating: 0, count: top - floor + 1)
        for (source, base) in [(counts, offset), (other.counts, other.offset)] {
            for (k, c) in source.enumerated() where c > 0 {
                let slot = Swift.max(base + k, floor) - floor
                merged[slot] = merged[slot].addingSaturating(c)
            }
        }
        counts = merged
        offset = floor
    }

    /// Adds a decoded sketch's buckets, as ``merge(_:)`` adds a sketch's: in place when they fall
    /// within this sketch's span, else into one new array for the union of both spans.
    mutating func merge(_ other: Sparse) {
        guard other.count > 0 else { return }
        mergeSummary(count: other.count, zeroCount: other.zeroCount, sum: other.sum, min: other.min, max: other.max)
        guard let low = other.buckets.first?.index, let high = other.buckets.last?.index else { return }
        if !sparse.isEmpty { densify() }
        if counts.isEmpty {
            offset = low
            counts = [UInt64](repeating: 0, count: high - low + 1)
            for bucket in other.buckets { counts[bucket.index - low] = bucket.count }
            return
        }
        let top = Swift.max(offset + counts.count - 1, high)
        let floor = Swift.max(Swift.min(offset, low), top - Self.maxBuckets + 1)
        if floor != offset || top != offset + counts.count - 1 {
            var merged = [UInt64](repeating: 0, count: top - floor + 1)
            for (k, c) in counts.enumerated() where c > 0 {
                let slot = Swift.max(offset + k, floor) - floor
                merged[slot] = merged[slot].addingSaturating(c)
            }
            counts = merged
            offset = floor
        }
        for bucket in other.buckets {
            let slot = Swift.max(bucket.index, floor) - floor
            counts[slot] = counts[slot].addingSaturating(bucket.count)
        }
    }

    /// Adds another sketch's count, zeros, sum, minimum and maximum (`count` > 0).
    private mutating func mergeSummary(
        count n: UInt64, zeroCount zeros: UInt64, sum s: Double, min low: Double, max high: Double
    ) {
        guard n > 0 else { return }
        if count == 0 {
            minimum = low
            maximum = high
        } else {
            minimum = Swift.min(minimum, low)
            maximum = Swift.max(maximum, high)
        }
        count = count.addingSaturating(n)
        zeroCount = zeroCount.addingSaturating(zeros)
        sum = Self.finiteSum(sum, s)
    }

    /// This sketch merged with `other`.
    package func merging(_ other: QuantileSketch) -> QuantileSketch {
        var copy = self
        copy.merge(other)
        return copy
    }

    /// The `q`-quantile (`q` clamped to 0…1): the value of the element of rank `⌊q × (count − 1)⌋`
    /// within 1 % relative error; `nil` when empty.
    package func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let clamped = q.isNaN ? 0 : Swift.min(Swift.max(q, 0), 1)
        let rank = (clamped * Double(count - 1)).rounded(.down)
        return value(atRank: rank >= Double(UInt64.max) ? count - 1 : UInt64(rank))
    }

    /// The value of the element of 0-based rank `rank` (clamped to `count − 1`) in sorted order,
    /// within 1 % relative error (exact for the smallest and the largest); 0 when empty.
    package func value(atRank rank: UInt64) -> Double {
        guard count > 0 else { return 0 }
        let r = Swift.min(rank, count - 1)
        if r == 0 { return minimum }  // the extremes are kept exactly
        if r == count - 1 { return maximum }
        if r < zeroCount { return 0 }
        var below = zeroCount
        for pair in sparse {
            below = below.addingSaturating(pair.count)
            if r < below { return clamp(Self.value(ofIndex: pair.index)) }
        }
        for (k, c) in counts.enumerated() where c > 0 {
            below = below.addingSaturating(c)
            if r < below { return clamp(Self.value(ofIndex: offset + k)) }
        }
        return maximum
    }

    /// Non-empty buckets as `(index, count)`, in index order.
    package var buckets: [(index: Int, count: UInt64)] {
        var out: [(index: Int, count: UInt64)] = []
        forEachBucket { out.append(($0, $1)) }
        return out
    }

    /// Whether a positive value was added (some bucket is not empty).
    private var hasBuckets: Bool { !counts.isEmpty || !sparse.isEmpty }

    /// The lowest and highest non-empty bucket indexes (`nil`: none).
    var bucketSpan: (low: Int, high: Int)? {
        if let first = sparse.first, let last = sparse.last { return (first.index, last.index) }
        guard !counts.isEmpty else { return nil }
        return (offset, offset + counts.count - 1)
    }

    /// Hands each non-empty bucket to `body`, in index order.
    @inline(__always)
    func forEachBucket(_ body: (Int, UInt64) -> Void) {
        for pair in sparse { body(pair.index, pair.count) }
        for (slot, c) in counts.enumerated() where c > 0 { body(offset + slot, c) }
    }

    /// Whether this sketch equals (``==``) the one adding `value` once to an empty sketch makes,
    /// without making it: the encoder asks this of every cell holding one device-day, and making
    /// that sketch allocated its bucket array each time.
    package func equalsSingle(_ value: Double) -> Bool {
        guard value.isFinite, value >= 0 else { return self == QuantileSketch() }  // `add` refuses it
        let v = value == 0 ? 0 : value
        guard count == 1, zeroCount == (v == 0 ? 1 : 0), sum == v, minimum == v, maximum == v else { return false }
        if v == 0 { return sparse.isEmpty && counts.isEmpty && offset == 0 }
        let index = Self.index(of: v)
        var seen = 0
        var same = false
        forEachBucket { bucket, count in
            seen += 1
            same = bucket == index && count == 1
        }
        return seen == 1 && same
    }

    /// Equal counts, sums, extremes and buckets, whichever form holds the buckets.
    package static func == (a: QuantileSketch, b: QuantileSketch) -> Bool {
        guard a.count == b.count, a.zeroCount == b.zeroCount, a.sum == b.sum, a.minimum == b.minimum,
            a.maximum == b.maximum
        else { return false }
        if a.sparse.isEmpty, b.sparse.isEmpty { return a.counts == b.counts && a.offset == b.offset }
        return a.buckets.elementsEqual(b.buckets) { $0.index == $1.index && $0.count == $1.count }
    }

    /// `a + b` capped at the largest finite `Double`, so a sketch always encodes to bytes its
    /// decoder accepts.
    static func finiteSum(_ a: Double, _ b: Double) -> Double {
        Swift.min(a + b, .greatestFiniteMagnitude)
    }

    private func clamp(_ value: Double) -> Double {
        Swift.min(Swift.max(value, minimum), maximum)
    }

    private mutating func addToBucket(_ index: Int, _ n: UInt64) {
        if counts.isEmpty {
            return addToPair(index, n)
        }
        let top = offset + counts.count - 1
        if index > top {
            counts.append(contentsOf: repeatElement(0, count: index - top))
        } else if index < offset {
            // Never grow below the collapse floor of the current highest index.
            let floor = Swift.max(index, top - Self.maxBuckets + 1)
            if floor < offset {
                counts.insert(contentsOf: repeatElement(0, count: offset - floor), at: 0)
                offset = floor
            }
        }
        let slot = Swift.max(index, offset) - offset
        counts[slot] = counts[slot].addingSaturating(n)
        collapseIfNeeded()
    }

    /// Adds to the sparse form (the dense array is empty), which turns dense once the dense array
    /// would be no larger (a span of at most twice the pairs, from ``minDenseBuckets`` pairs on),
    /// past ``maxSparseBuckets`` pairs, or past ``maxBuckets`` of span (where the dense form
    /// collapses).
    private mutating func addToPair(_ index: Int, _ n: UInt64) {
        var low = 0
        var high = sparse.count
        while low < high {
            let middle = (low + high) / 2
            if sparse[middle].index < index { low = middle + 1 } else { high = middle }
        }
        if low < sparse.count, sparse[low].index == index {
            sparse[low].count = sparse[low].count.addingSaturating(n)
            return
        }
        sparse.insert((index: index, count: n), at: low)
        guard let first = sparse.first, let last = sparse.last else { return }
        let span = last.index - first.index + 1
        if sparse.count > Self.maxSparseBuckets || span > Self.maxBuckets
            || (sparse.count >= Self.minDenseBuckets && span <= 2 * sparse.count)
        {
            densify()
        }
    }

    /// Moves the pairs into the dense array, collapsing below the floor of the highest index.
    private mutating func densify() {
        guard let first = sparse.first, let last = sparse.last else { return }
        let floor = Swift.max(first.index, last.index - Self.maxBuckets + 1)
        var dense = [UInt64](repeating: 0, count: last.index - floor + 1)
        for pair in sparse {
            let slot = Swift.max(pair.index, floor) - floor
            dense[slot] = dense[slot].addingSaturating(pair.count)
        }
        counts = dense
        offset = floor
        sparse = []
    }

    /// Folds the buckets below `highest − maxBuckets + 1` into that bucket.
    private mutating func collapseIfNeeded() {
        guard counts.count > Self.maxBuckets else { return }
        let excess = counts.count - Self.maxBuckets
        var folded: UInt64 = 0
        for c in counts[0...excess] { folded = folded.addingSaturating(c) }
        counts.removeFirst(excess)
        counts[0] = folded
        offset += excess
    }
}
