import Foundation

/// Mergeable count, mean and variance of one averaged MetricKit figure (a scalar that arrives as
/// `averageValue`, `standardDeviation`, `sampleCount`: average suspended memory, average pixel
/// luminance), so a group's mean and standard deviation come from a fold of payloads.
///
/// The state is `(n, mean, M2)` with `M2 = Σ (x − mean)²`; two states merge by Chan, Golub &
/// LeVeque's pairwise update (`δ = mean_b − mean_a`, `mean = mean_a + δ·n_b/n`, `M2 = M2_a + M2_b +
/// δ²·n_a·n_b/n`), exact up to rounding and independent of how payloads are grouped. A payload's
/// average enters with its `sampleCount` as weight and its standard deviation as `M2 = sd²·n`
/// (MetricKit reports the population deviation). Histogram metrics need no such state:
/// ``BucketDistribution`` merges by adding bucket counts and interpolates inside buckets.
package struct Moments: Sendable, Equatable {
    /// Samples (weights) folded.
    package private(set) var count: Double = 0
    /// Weighted mean; 0 when empty.
    package private(set) var mean: Double = 0
    /// Sum of squared deviations from the mean.
    package private(set) var m2: Double = 0

    /// An empty state.
    package init() {}

    /// One payload's average: `mean` over `count` samples with population standard deviation
    /// `standardDeviation`. Non-finite or negative inputs give an empty state.
    package init(mean: Double, standardDeviation: Double = 0, count: Double = 1) {
        guard mean.isFinite, standardDeviation.isFinite, count.isFinite, standardDeviation >= 0, count > 0 else {
            return
        }
        self.count = count
        self.mean = mean
        m2 = standardDeviation * standardDeviation * count
    }

    /// Adds one sample of weight 1.
    package mutating func add(_ value: Double) {
        merge(Moments(mean: value))
    }

    /// Folds `other` into this state.
    package mutating func merge(_ other: Moments) {
        guard other.count > 0 else { return }
        guard count > 0 else {
            self = other
            return
        }
        let n = count + other.count
        let delta = other.mean - mean
        mean += delta * other.count / n
        m2 += other.m2 + delta * delta * count * other.count / n
        count = n
    }

    /// Population variance `M2 / n`; `nil` when empty.
    package var variance: Double? { count > 0 ? m2 / count : nil }
    /// Population standard deviation; `nil` when empty.
    package var standardDeviation: Double? { variance.map { $0.squareRoot() } }

    /// Version 1 bytes: `u8 1`, then `count`, `mean`, `m2` as little-endian IEEE 754 doubles.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [1]
        ByteWriter.double(count, into: &out)
        ByteWriter.double(mean, into: &out)
        ByteWriter.double(m2, into: &out)
        return out
    }

    /// Reads ``encoded()`` bytes; throws on another version, a wrong length or values that are not
    /// finite, a negative count or `M2`.
    package init(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        guard bytes.count <= 25 else { throw .trailingBytes }
        var reader = ByteReader(bytes)
        let version = reader.byte()
        guard version == 1 else { throw .unsupportedVersion(version) }
        let count = try reader.double()
        let mean = try reader.double()
        let m2 = try reader.double()
        guard reader.atEnd else { throw .trailingBytes }
        guard count.isFinite, mean.isFinite, m2.isFinite, count >= 0, m2 >= 0 else {
            throw .invalid("moments not finite or negative")
        }
        self.count = count
        self.mean = count > 0 ? mean : 0
        self.m2 = count > 0 ? m2 : 0
    }
}

extension BucketDistribution {
    /// The distribution of both histograms: counts of identical bounds added (what a fold of
    /// payloads keeps for a histogram metric).
    package func merging(_ other: BucketDistribution) -> BucketDistribution {
        BucketDistribution(buckets + other.buckets)
    }
}
