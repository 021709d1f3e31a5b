import Foundation
import LifelineAnalysis
import Testing

/// Seeded draws for the tests.
struct Draws {
    var rng: BootstrapRNG

    init(seed: UInt64) { rng = BootstrapRNG(seed: seed) }

    mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * rng.nextUnit() }
    mutating func logNormal(median: Double, sigma: Double) -> Double { median * exp(sigma * rng.nextNormal()) }
    mutating func bimodal() -> Double {
        rng.nextUnit() < 0.7 ? logNormal(median: 300, sigma: 0.2) : logNormal(median: 40_000, sigma: 0.3)
    }
}

@Suite("Quantile sketch")
struct QuantileSketchTests {
    static let quantiles: [Double] = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1]

    /// The element of rank ⌊q(n − 1)⌋, as the sketch defines a quantile.
    static func exact(_ sorted: [Double], _ q: Double) -> Double {
        sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
    }

    static func checkAccuracy(_ values: [Double], _ label: String) {
        let sketch = QuantileSketch(values)
        let sorted = values.sorted()
        #expect(sketch.count == UInt64(values.count))
        for q in quantiles {
            let truth = exact(sorted, q)
            let estimate = sketch.quantile(q) ?? .nan
            let error = truth == 0 ? abs(estimate) : abs(estimate - truth) / truth
            #expect(error <= 0.01 + 1e-12, "\(label) q=\(q): \(estimate) vs \(truth) (\(error))")
        }
        #expect(sketch.min == sorted.first)
        #expect(sketch.max == sorted.last)
    }

    @Test("relative error ≤ 1 % at every quantile on uniform, log-normal and bimodal values")
    func accuracy() {
        var draws = Draws(seed: 1)
        Self.checkAccuracy((0..<20_000).map { _ in draws.uniform(1, 1_000) }, "uniform")
        Self.checkAccuracy((0..<20_000).map { _ in draws.logNormal(median: 800, sigma: 0.8) }, "log-normal")
        Self.checkAccuracy((0..<20_000).map { _ in draws.bimodal() }, "bimodal")
        Self.checkAccuracy((0..<5_000).map { _ in draws.uniform(1e-6, 1e12) }, "wide")
        // Zeros kept apart: a device-day without a hang answers exactly 0.
        let withZeros = (0..<1_000).map { $0 < 600 ? 0 : draws.logNormal(median: 2, sigma: 1) }
        Self.checkAccuracy(withZeros, "zeros")
        #expect(QuantileSketch(withZeros).quantile(0.5) == 0)
        #expect(QuantileSketch(withZeros).zeroCount == 600)
    }

    @Test("small exact cases: one value, counts, empty")
    func smallCases() {
        var sketch = QuantileSketch()
        #expect(sketch.quantile(0.5) == nil)
        #expect(sketch.min == nil && sketch.max == nil && sketch.mean == nil)
        sketch.add(100, count: 3)
        #expect(sketch.count == 3)
        #expect(sketch.sum == 300)
        // A single distinct value is clamped to [min, max]: exact.
        #expect(sketch.quantile(0) == 100 && sketch.quantile(0.9) == 100)
        sketch.add(200)
        #expect(sketch.quantile(1) == 200)
        let p50 = sketch.quantile(0.5) ?? 0
        #expect(abs(p50 - 100) <= 1)
    }

    @Test("negative, NaN and infinite values are refused and change nothing")
    func refusals() {
        var sketch = QuantileSketch([1, 2, 3])
        let before = sketch
        let accepted = [-1, .nan, .infinity, -.infinity].map { sketch.add($0) }
        #expect(accepted == [false, false, false, false])
        #expect(sketch == before)
        let zero = sketch.add(-0.0)
        #expect(zero)
        #expect(sketch.zeroCount == 1 && sketch.min == 0)
    }

    @Test("equalsSingle answers as == with the sketch of one value, for every sketch and value tried")
    func equalsSingleIsEquality() throws {
        func single(_ value: Double) -> QuantileSketch {
            var sketch = QuantileSketch()
            sketch.add(value)
            return sketch
        }
        let values: [Double] = [0, -0.0, 1, 1.004, 1.02, 3.5, 250, 250.000_1, 1e-300, 1e300, .leastNonzeroMagnitude]
        var sketches = values.map(single) + [QuantileSketch(), QuantileSketch([1, 1]), QuantileSketch([0, 250])]
        sketches += try values.map { try QuantileSketch(decoding: single($0).encoded()) }
        var merged = QuantileSketch()
        merged.merge(single(250))
        merged.merge(QuantileSketch())
        sketches.append(merged)
        let wide = QuantileSketch((1...40).map { Double($0) * 1_000 })  // past the sparse form
        sketches.append(wide)
        let probes = values + [-1, .nan, .infinity, 251, 999]
        for (s, sketch) in sketches.enumerated() {
            for probe in probes {
                #expect(sketch.equalsSingle(probe) == (sketch == single(probe)), "sketch \(s), value \(probe)")
            }
        }
        #expect(single(250).equalsSingle(250) && !single(250).equalsSingle(999) && !wide.equalsSingle(1_000))
    }

    @Test("the merge of sketches equals the sketch of the union")
    func mergeEqualsUnion() {
        var draws = Draws(seed: 2)
        let parts = (0..<5).map { part in
            (0..<3_000).map { _ in part == 2 ? 0 : draws.logNormal(median: Double(100 * (part + 1)), sigma: 0.6) }
        }
        let union = QuantileSketch(parts.flatMap { $0 })
        var merged = QuantileSketch()
        for part in parts.reversed() { merged.merge(QuantileSketch(part)) }
        #expect(merged.buckets.map(\.index) == union.buckets.map(\.index))
        #expect(merged.buckets.map(\.count) == union.buckets.map(\.count))
        #expect(merged.count == union.count && merged.zeroCount == union.zeroCount)
        #expect(merged.min == union.min && merged.max == union.max)
        #expect(abs(merged.sum - union.sum) <= 1e-9 * union.sum)
        for q in Self.quantiles { #expect(merged.quantile(q) == union.quantile(q)) }
    }

    @Test("beyond 2,048 buckets the lowest collapse; high quantiles keep 1 %, merge still equals union")
    func collapse() {
        // 1 … 1e30 spans 30 decades; 2,048 buckets at 1 % keep the top ~17.8 (115 a decade).
        var draws = Draws(seed: 3)
        let values = (0..<4_000).map { _ in pow(10, draws.uniform(0, 30)) }
        let sketch = QuantileSketch(values)
        #expect(sketch.buckets.count <= QuantileSketch.maxBuckets)
        let span = (sketch.buckets.last?.index ?? 0) - (sketch.buckets.first?.index ?? 0) + 1
        #expect(span <= QuantileSketch.maxBuckets)
        #expect(sketch.count == 4_000)
        let sorted = values.sorted()
        for q in [0.5, 0.75, 0.9, 0.99, 1] {
            let truth = Self.exact(sorted, q)
            #expect(abs((sketch.quantile(q) ?? 0) - truth) / truth <= 0.01 + 1e-12, "q=\(q)")
        }
        // A low quantile inside the collapsed range reads high (documented).
        #expect((sketch.quantile(0.01) ?? 0) > Self.exact(sorted, 0.01) * 1.02)
        var merged = QuantileSketch(values[0..<1_000])
        merged.merge(QuantileSketch(values[1_000...]))
        #expect(merged.buckets.map(\.index) == sketch.buckets.map(\.index))
        #expect(merged.buckets.map(\.count) == sketch.buckets.map(\.count))
    }

    @Test("encode/decode round-trips, deterministically")
    func roundTrip() throws {
        var draws = Draws(seed: 4)
        let samples: [QuantileSketch] = [
            QuantileSketch(),
            QuantileSketch([0, 0]),
            QuantileSketch([42]),
            QuantileSketch((0..<10_000).map { _ in draws.bimodal() } + [0, 0, 0]),
            QuantileSketch((0..<4_000).map { _ in pow(10, draws.uniform(-300, 300)) }),
        ]
        for sketch in samples {
            let bytes = sketch.encoded()
            let decoded = try QuantileSketch(decoding: bytes)
            #expect(decoded == sketch)
            #expect(decoded.encoded() == bytes)
            #expect(bytes.count <= QuantileSketch.maxEncodedSize)
        }
        // Compact: 10,000 bimodal values in a few hundred bytes.
        #expect(samples[3].encoded().count < 1_000)
        #expect(QuantileSketch().encoded() == [1, 0] + [UInt8](repeating: 0, count: 24) + [0])
    }

    @Test("merging encoded bytes equals decoding and merging: in place, growing, collapsing, zeros only")
    func mergeDecoding() throws {
        var draws = Draws(seed: 7)
        let parts: [QuantileSketch] = [
            QuantileSketch(),
            QuantileSketch([0, 0, 0]),
            QuantileSketch((0..<500).map { _ in draws.logNormal(median: 300, sigma: 0.2) }),
            QuantileSketch((0..<500).map { _ in draws.logNormal(median: 250, sigma: 0.1) }),  // inside the span
            QuantileSketch((0..<500).map { _ in draws.logNormal(median: 40_000, sigma: 0.3) }),  // above it
            QuantileSketch((0..<500).map { _ in draws.logNormal(median: 2, sigma: 0.3) }),  // below it
            QuantileSketch((0..<2_000).map { _ in pow(10, draws.uniform(0, 30)) }),  // collapses
            QuantileSketch([0, 17]),
        ]
        for order in [Array(parts.indices), parts.indices.reversed()] {
            var expected = QuantileSketch()
            var merged = QuantileSketch()
            for index in order {
                expected.merge(parts[index])
                try merged.merge(decoding: parts[index].encoded())
                #expect(merged == expected, "after part \(index)")
            }
        }
        // Refused bytes change nothing.
        var sketch = parts[2]
        var bad = parts[3].encoded()
        bad.append(0)
        #expect(throws: SketchDecodingError.trailingBytes) { try sketch.merge(decoding: bad) }
        #expect(sketch == parts[2])
    }

    @Test("random, truncated and corrupted bytes throw and never trap")
    func hostileBytes() throws {
        var rng = BootstrapRNG(seed: 5)
        var draws = Draws(seed: 6)
        let good = QuantileSketch((0..<500).map { _ in draws.logNormal(median: 500, sigma: 0.5) }).encoded()
        for cut in 0..<good.count {
            #expect(throws: SketchDecodingError.self) { try QuantileSketch(decoding: good[0..<cut]) }
        }
        #expect(throws: SketchDecodingError.trailingBytes) { try QuantileSketch(decoding: good + [0]) }
        #expect(throws: SketchDecodingError.unsupportedVersion(2)) {
            try QuantileSketch(decoding: [2] + good.dropFirst())
        }
        var decodedSome = 0
        for _ in 0..<5_000 {
            var bytes = good
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let at = Int(rng.next() % UInt64(bytes.count))
                bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            }
            if let sketch = try? QuantileSketch(decoding: bytes) {
                decodedSome += 1
                // Whatever decodes is a usable sketch.
                _ = sketch.quantile(0.9)
                #expect(sketch.buckets.count <= QuantileSketch.maxBuckets)
            }
        }
        for length in [1, 2, 9, 30, 100, 5_000] {
            for _ in 0..<100 {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if let sketch = try? QuantileSketch(decoding: [1] + bytes) { _ = sketch.quantile(0.5) }
            }
        }
        // Hand-made hostile headers: a huge bucket count, an index far out, a span too wide.
        let header: [UInt8] = [1, 0] + [UInt8](repeating: 0, count: 16) + ByteOf.double(1)
        #expect(throws: SketchDecodingError.self) {
            try QuantileSketch(decoding: header + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        }
        #expect(throws: SketchDecodingError.self) { try QuantileSketch(decoding: header + [1, 0xFE, 0xFF, 0x7F, 1]) }
        #expect(throws: SketchDecodingError.self) { try QuantileSketch(decoding: header + [2, 0, 1, 0x80, 0x10, 1]) }
        #expect(throws: SketchDecodingError.badVarint) {
            try QuantileSketch(decoding: [1] + [UInt8](repeating: 0xFF, count: 11))
        }
        #expect(decodedSome < 5_000)
        // Huge values keep a finite sum, so the sketch still encodes to bytes its decoder accepts.
        var huge = QuantileSketch()
        huge.add(.greatestFiniteMagnitude, count: 10)
        huge.merge(huge)
        #expect(huge.sum == .greatestFiniteMagnitude)
        #expect(try QuantileSketch(decoding: huge.encoded()) == huge)
    }

    @Test("a few buckets spread wide (kept as pairs) answer, encode, merge and compare as the dense buckets")
    func sparseBucketsAsDense() throws {
        var rng = BootstrapRNG(seed: 27)
        for round in 0..<400 {
            // 1–40 values over up to 12 decades (a span of up to ~1,400 buckets, some rounds far wider),
            // with repeats: pairs, then dense past 32 or once dense is no larger.
            let n = 1 + Int(rng.next() % 40)
            let decades = round % 50 == 0 ? 600.0 : Double(1 + rng.next() % 12)
            let values = (0..<n).map { _ in rng.nextUnit() < 0.2 ? 0 : pow(10, rng.nextUnit() * decades - 3) }
            let added = QuantileSketch(values)  // pairs while few and spread
            let dense = try QuantileSketch(decoding: added.encoded())  // decoded: always dense
            #expect(added == dense, "round \(round)")
            #expect(dense.encoded() == added.encoded())
            #expect(added.buckets.elementsEqual(dense.buckets) { $0 == $1 })
            for q in Self.quantiles { #expect(added.quantile(q) == dense.quantile(q), "round \(round) q=\(q)") }
            // Merged either way round and in either form: the same state, the same bytes.
            let other = QuantileSketch(values.reversed().map { $0 * 3 })
            let otherDense = try QuantileSketch(decoding: other.encoded())
            let merges = [
                added.merging(other), added.merging(otherDense), dense.merging(other), other.merging(added),
                otherDense.merging(added), QuantileSketch(values + values.map { $0 * 3 }),
            ]
            for merged in merges {
                #expect(merged.count == merges[0].count && merged.buckets.elementsEqual(merges[0].buckets) { $0 == $1 })
                #expect(merged.quantile(0.5) == merges[0].quantile(0.5))
                #expect(merged.quantile(0.9) == merges[0].quantile(0.9))
            }
        }
        // Pairs beyond the 2,048-bucket span collapse as the dense buckets do.
        let wide = QuantileSketch([1e-300, 1e-200, 1, 1e300])
        let wideDense = try QuantileSketch(decoding: wide.encoded())
        #expect(wide == wideDense)
        // Everything below the floor of 1e300's bucket folds into it: two buckets are left.
        #expect(wide.buckets.count == 2)
        #expect(wide.quantile(1) == 1e300)
    }
}

enum ByteOf {
    static func double(_ value: Double) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value.bitPattern >> UInt64(8 * $0)) }
    }
}
