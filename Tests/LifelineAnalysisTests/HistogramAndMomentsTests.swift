import Foundation
import LifelineAnalysis
import Testing

@Suite("Histogram percentiles and moments")
struct HistogramAndMomentsTests {
    typealias Bucket = BucketDistribution.Bucket

    /// 10 samples in 0–10 ms, 30 in 10–20 ms, 60 in 20–40 ms.
    static let launch = BucketDistribution([
        Bucket(start: 20, end: 40, count: 60), Bucket(start: 0, end: 10, count: 10),
        Bucket(start: 10, end: 20, count: 30),
    ])

    @Test("percentiles interpolate linearly inside the bucket holding the rank")
    func exactPercentiles() throws {
        let h = Self.launch
        #expect(h.count == 100)
        #expect(h.percentile(0) == 0)
        #expect(h.percentile(0.1) == 10)  // rank 10: the end of the first bucket
        #expect(h.percentile(0.25) == 15)  // rank 25: 10 + 10 × 15/30
        #expect(try #require(h.percentile(0.5)) == 20 + 20 * 10 / 60.0)
        #expect(try #require(h.percentile(0.9)) == 20 + 20 * 50 / 60.0)
        #expect(h.percentile(1) == 40)
        let midpointSum: Double = 5 * 10 + 15 * 30 + 30 * 60
        #expect(h.mean == midpointSum / 100)
        #expect(BucketDistribution([]).percentile(0.5) == nil)
        // A bucket whose start equals its end gives that value exactly.
        let point = BucketDistribution([Bucket(start: 7, end: 7, count: 5), Bucket(start: 9, end: 9, count: 5)])
        #expect(point.percentile(0.3) == 7)
        #expect(point.percentile(0.7) == 9)
    }

    @Test("histograms merge by adding the counts of identical bounds, in any order")
    func histogramMerge() {
        let a = BucketDistribution([Bucket(start: 0, end: 10, count: 10), Bucket(start: 20, end: 40, count: 20)])
        let b = BucketDistribution([Bucket(start: 10, end: 20, count: 30), Bucket(start: 20, end: 40, count: 40)])
        #expect(a.merging(b) == Self.launch)
        #expect(b.merging(a) == Self.launch)
        #expect(a.merging(b).percentile(0.9) == Self.launch.percentile(0.9))
    }

    @Test("a histogram already canonical is kept as it is; any other order, duplicate or empty bucket gives the same")
    func canonicalBuckets() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bounds = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                Double(Int.random(in: 0...20, using: &generator)) * 5
            }
            let raw = bounds.map { Bucket(start: $0, end: $0 + 5, count: Int64.random(in: 0...3, using: &generator)) }
            // Each bucket split in two halves (one may be empty): the same canonical form.
            let split = raw.flatMap {
                [
                    Bucket(start: $0.start, end: $0.end, count: $0.count / 2),
                    Bucket(start: $0.start, end: $0.end, count: $0.count - $0.count / 2),
                ]
            }
            let canonical = BucketDistribution(raw).buckets
            #expect(BucketDistribution.isCanonical(canonical))
            #expect(BucketDistribution(canonical).buckets == canonical)
            #expect(BucketDistribution(raw.shuffled(using: &generator)).buckets == canonical)
            #expect(BucketDistribution(split.shuffled(using: &generator)).buckets == canonical)
            let unsorted = canonical.count > 1 ? Array(canonical.reversed()) : []
            #expect(unsorted.isEmpty || !BucketDistribution.isCanonical(unsorted))
        }
        // −0 and +0 are one bound; NaN is never canonical.
        #expect(
            !BucketDistribution.isCanonical([Bucket(start: -0.0, end: 1, count: 1), Bucket(start: 0, end: 1, count: 1)])
        )
        #expect(
            BucketDistribution([Bucket(start: -0.0, end: 1, count: 1), Bucket(start: 0, end: 1, count: 1)]).count == 2)
        #expect(
            !BucketDistribution.isCanonical([Bucket(start: .nan, end: 1, count: 1), Bucket(start: 2, end: 3, count: 1)])
        )
        #expect(!BucketDistribution.isCanonical([Bucket(start: 1, end: 2, count: 0)]))
    }

    @Test("moments merge to the mean and deviation of the union; payload averages weigh by sample count")
    func moments() throws {
        let xs: [Double] = [1, 2, 3, 4, 100]
        let ys: [Double] = [10, 20, 30]
        var a = Moments()
        xs.forEach { a.add($0) }
        var b = Moments()
        ys.forEach { b.add($0) }
        var all = Moments()
        (xs + ys).forEach { all.add($0) }
        var merged = a
        merged.merge(b)
        let mean = (xs + ys).reduce(0, +) / 8
        let variance = (xs + ys).map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 8
        #expect(abs(merged.mean - mean) < 1e-12)
        #expect(abs(try #require(merged.variance) - variance) < 1e-9)
        #expect(abs(try #require(all.variance) - variance) < 1e-9)
        // Two payloads: 100 MB ± 10 over 3 samples and 200 MB ± 0 over 1.
        var payloads = Moments(mean: 100, standardDeviation: 10, count: 3)
        payloads.merge(Moments(mean: 200, standardDeviation: 0, count: 1))
        #expect(payloads.count == 4 && payloads.mean == 125)
        // M2 = 300 + 0 + 100² × 3 × 1 / 4 = 7,800 → variance 1,950.
        #expect(abs(try #require(payloads.variance) - 1_950) < 1e-9)
        #expect(Moments(mean: .nan, count: 2).count == 0)
        let decoded = try Moments(decoding: payloads.encoded())
        #expect(decoded == payloads)
        #expect(throws: SketchDecodingError.self) { try Moments(decoding: payloads.encoded().dropLast()) }
        #expect(throws: SketchDecodingError.self) {
            try Moments(decoding: [1] + ByteOf.double(-1) + [UInt8](repeating: 0, count: 16))
        }
    }
}
