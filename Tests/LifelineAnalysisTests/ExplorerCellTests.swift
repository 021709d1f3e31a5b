import Foundation
import LifelineAnalysis
import Testing

@Suite("Explorer cells and rows")
struct ExplorerCellTests {
    typealias Bucket = BucketDistribution.Bucket

    static func metric(_ id: String) throws -> ExplorerMetric { try #require(ExplorerCatalog.metric(id)) }

    static func close(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-9) -> Bool {
        guard let a else { return false }
        return abs(a - b) <= tolerance * Swift.max(1, abs(b))
    }

    @Test("a histogram row interpolates inside the merged buckets: exact p50 and p90")
    func histogramRow() throws {
        // 60 device-days, each with 1 sample in 0–10 ms, 3 in 10–20 ms, 6 in 20–40 ms.
        let day: [Bucket] = [
            Bucket(start: 0, end: 10, count: 1), Bucket(start: 10, end: 20, count: 3),
            Bucket(start: 20, end: 40, count: 6),
        ]
        let cell = ExplorerCell(Array(repeating: ExplorerSample.histogram(day), count: 60))
        #expect(cell.deviceDays == 60)
        #expect(
            cell.buckets == [
                Bucket(start: 0, end: 10, count: 60), Bucket(start: 10, end: 20, count: 180),
                Bucket(start: 20, end: 40, count: 360),
            ])
        let row = ExplorerRow(metric: try Self.metric("launch.time_to_first_draw"), cell: cell)
        #expect(!row.insufficientData)
        // 600 samples: rank 300 lies 60 into the 360 of 20–40 ms; rank 540, 300 into it.
        #expect(row.p50 == 20 + 20 * 60 / 360.0)
        #expect(row.p90 == 20 + 20 * 300 / 360.0)
        let midpointMean: Double = (5 * 1 + 15 * 3 + 30 * 6) / 10
        #expect(Self.close(row.mean, midpointMean))
        // Every device-day has the same mean: no spread between device-days, a zero margin.
        #expect(Self.close(row.errorMargin, 0))
        #expect(row.goal == nil)
        #expect(row.unit == .milliseconds && row.category == .launch)
    }

    @Test("a per-device-day row: sketch percentiles within 1 %, exact mean and 95 % margin of the mean")
    func valueRow() throws {
        let values = (1...100).map(Double.init)
        let cell = ExplorerCell(values.shuffled().map { ExplorerSample.value($0) })
        let row = ExplorerRow(metric: try Self.metric("memory.peak"), cell: cell)
        #expect(row.deviceDays == 100)
        // Ranks ⌊0.5 × 99⌋ = 49 and ⌊0.9 × 99⌋ = 89: the values 50 and 90, within 1 %.
        #expect(abs(try #require(row.p50) - 50) <= 0.5)
        #expect(abs(try #require(row.p90) - 90) <= 0.9)
        #expect(Self.close(row.mean, 50.5))
        // Sample standard deviation of 1…100 is √(100 × 101 / 12); margin = 1.96 × sd / √100.
        let sd = (100.0 * 101 / 12).squareRoot()
        #expect(Self.close(row.errorMargin, ExplorerRow.z95 * sd / 10))
        // Constant values: the sketch answers exactly (min = max).
        let constant = ExplorerRow(
            metric: try Self.metric("memory.peak"), cell: ExplorerCell(Array(repeating: .value(123_456), count: 50)))
        #expect(constant.p50 == 123_456 && constant.p90 == 123_456 && constant.mean == 123_456)
        #expect(constant.errorMargin == 0)
    }

    @Test("a rate's mean is pooled (Σ numerator / Σ hours); its percentiles are per device-day")
    func rateRow() throws {
        var samples: [ExplorerSample] = []
        for n in 0..<50 { samples.append(.rate(numerator: Double(n % 2) * 10, hours: n % 2 == 0 ? 3 : 1)) }
        let cell = ExplorerCell(samples)
        let row = ExplorerRow(metric: try Self.metric("hang.seconds_per_foreground_hour"), cell: cell)
        // 25 days of 10 s in 1 h, 25 of 0 s in 3 h: pooled 250 / 100 = 2.5 s/h (the per-day mean is 5).
        #expect(Self.close(row.mean, 2.5))
        #expect(row.p50 == 0)  // rank ⌊0.5 × 49⌋ = 24: the 25th smallest, a zero
        #expect(row.p90 == 10)
        #expect(row.unit == .secondsPerHour)
        #expect(try #require(row.errorMargin) > 0)
    }

    @Test("below the minimum device-days a row shows no figure, only its device-days")
    func insufficientData() throws {
        let metric = try Self.metric("animation.scroll_hitch_time_ratio")
        let few = ExplorerRow(metric: metric, cell: ExplorerCell((0..<49).map { _ in .value(12) }))
        #expect(few.insufficientData && few.deviceDays == 49)
        #expect(few.p50 == nil && few.p90 == nil && few.mean == nil && few.errorMargin == nil && few.goal == nil)
        #expect(few.p50ErrorMargin == nil && few.p90ErrorMargin == nil)
        let enough = ExplorerRow(metric: metric, cell: ExplorerCell((0..<50).map { _ in .value(12) }))
        #expect(!enough.insufficientData && enough.p50 == 12 && enough.goal == .poor)
        let good = ExplorerRow(metric: metric, cell: ExplorerCell((0..<50).map { _ in .value(4) }))
        #expect(good.goal == .good)
        #expect(ExplorerRow(metric: metric, cell: ExplorerCell()).insufficientData)
    }

    @Test("invalid samples are refused and change nothing")
    func invalidSamples() {
        var cell = ExplorerCell()
        #expect(!cell.add(.value(-1)) && !cell.add(.value(.nan)) && !cell.add(.value(.infinity)))
        #expect(!cell.add(.rate(numerator: 1, hours: 0)) && !cell.add(.rate(numerator: -1, hours: 1)))
        #expect(!cell.add(.histogram([])) && !cell.add(.histogram([Bucket(start: 5, end: 1, count: 3)])))
        #expect(cell == ExplorerCell())
    }

    /// Seeded random samples of every kind.
    static func samples(seed: UInt64, count: Int) -> [ExplorerSample] {
        var draws = Draws(seed: seed)
        return (0..<count).map { n in
            switch n % 3 {
            case 0: .value((draws.logNormal(median: 200, sigma: 1)).rounded())
            case 1: .rate(numerator: draws.uniform(0, 50).rounded(), hours: draws.uniform(0.5, 8).rounded())
            default:
                .histogram(
                    (0..<3).map { _ in
                        let start = (draws.uniform(0, 20).rounded()) * 10
                        return Bucket(start: start, end: start + 10, count: Int64(draws.uniform(1, 9)))
                    })
            }
        }
    }

    /// Equal up to the floating-point sums: counts, sketch buckets, extremes and histogram exactly.
    static func sameUpToRounding(_ a: ExplorerCell, _ b: ExplorerCell) -> Bool {
        let counts = a.deviceDays == b.deviceDays && a.sketch.zeroCount == b.sketch.zeroCount
        let sketchBuckets =
            a.sketch.buckets.map(\.index) == b.sketch.buckets.map(\.index)
            && a.sketch.buckets.map(\.count) == b.sketch.buckets.map(\.count)
        let extremes = a.sketch.min == b.sketch.min && a.sketch.max == b.sketch.max
        let ratio = close(a.moments.ratio, b.moments.ratio ?? .nan)
        let error = close(a.moments.standardError, b.moments.standardError ?? .nan)
        let sum = close(a.sketch.sum, b.sketch.sum)
        return counts && sketchBuckets && extremes && a.buckets == b.buckets && ratio && error && sum
    }

    @Test("merging is associative, commutative and equal to folding everything at once")
    func mergeLaws() {
        let all = Self.samples(seed: 7, count: 900)
        let (a, b, c) = (ExplorerCell(all[0..<250]), ExplorerCell(all[250..<700]), ExplorerCell(all[700...]))
        let once = ExplorerCell(all)
        let left = a.merging(b).merging(c)
        let right = a.merging(b.merging(c))
        let swapped = c.merging(a).merging(b)
        #expect(Self.sameUpToRounding(left, once))
        #expect(Self.sameUpToRounding(right, once))
        #expect(Self.sameUpToRounding(swapped, once))
        #expect(a.merging(ExplorerCell()) == a && ExplorerCell().merging(a) == a)
        // Rows agree.
        let metric = ExplorerCatalog.metric("launch.time_to_first_draw")!
        let rows = [left, right, once].map { ExplorerRow(metric: metric, cell: $0) }
        #expect(rows[0].p50 == rows[2].p50 && rows[1].p90 == rows[2].p90 && rows[0].deviceDays == 900)
    }

    @Test("past 128 distinct bounds neighbours merge: counts stay exact, bounds widen")
    func bucketCap() {
        let buckets = (0..<300).map { Bucket(start: Double($0), end: Double($0 + 1), count: 2) }
        let cell = ExplorerCell([.histogram(buckets)])
        #expect(cell.buckets.count <= ExplorerCell.maxBuckets)
        #expect(cell.buckets.reduce(0) { $0 + $1.count } == 600)
        #expect(cell.buckets.first?.start == 0 && cell.buckets.last?.end == 300)
    }

    @Test("encoding round-trips every cell exactly and is canonical")
    func roundTrip() throws {
        let cells = [
            ExplorerCell(), ExplorerCell(Self.samples(seed: 3, count: 500)),
            ExplorerCell([.value(0), .value(0)]), ExplorerCell([.histogram([Bucket(start: 0.25, end: 1.5, count: 3)])]),
            ExplorerCell([.value(.greatestFiniteMagnitude), .value(.leastNonzeroMagnitude)]),
        ]
        for cell in cells {
            let bytes = cell.encoded()
            let decoded = try ExplorerCell(decoding: bytes)
            #expect(decoded == cell)
            #expect(decoded.encoded() == bytes)
        }
        #expect(ExplorerCell().encoded().count < 80)
        // Whole-millisecond buckets cost about 5 bytes each (the README's figure).
        let launch = (0..<100).map { (n: Int) -> Bucket in
            let start = Double(300 + 10 * n)
            return Bucket(start: start, end: start + 10, count: 40)
        }
        // (Two device-days each: one device-day has its own compact form, below.)
        let one = ExplorerCell([.histogram([launch[0]]), .histogram([launch[0]])]).encoded().count
        let hundred: Int = ExplorerCell([.histogram(launch), .histogram(launch)]).encoded().count
        #expect(hundred - one <= 495)
    }

    @Test("one device-day encodes in the compact versions 2-4, decodes to the same cell, and merges the same")
    func singleDeviceDay() throws {
        let launch = (0..<14).map { (n: Int) -> Bucket in
            let start = Double(200 + 10 * n)
            return Bucket(start: start, end: start + 10, count: 7)
        }
        let samples: [ExplorerSample] = [
            .value(0), .value(412_345), .value(0.125), .value(.leastNonzeroMagnitude),
            .rate(numerator: 3, hours: 2.5), .rate(numerator: 0, hours: 7), .histogram(launch),
            .histogram([Bucket(start: 0.25, end: 1.5, count: 3)]),
        ]
        var merged = ExplorerCell()
        var mergedDecoded = ExplorerCell()
        for sample in samples {
            let cell = ExplorerCell([sample])
            let bytes = cell.encoded()
            // Buckets: version 2; none: 3; none and y = 0 (a value of 0, a rate of 0 exits): 4.
            let expected: UInt8 = !cell.buckets.isEmpty ? 2 : cell.moments.meanY == 0 ? 4 : 3
            #expect(bytes.first == expected, "\(sample)")
            let decoded = try ExplorerCell(decoding: bytes)
            #expect(decoded == cell, "\(sample)")
            #expect(decoded.encoded() == bytes)
            merged.merge(cell)
            mergedDecoded.merge(decoded)
        }
        #expect(merged == mergedDecoded)
        // Merged from their bytes, in both orders, with a many-device-day cell between: the same.
        let many = ExplorerCell(Self.samples(seed: 3, count: 200))
        for order in [samples, samples.reversed()] {
            var expected = many
            var fromBytes = ExplorerCell()
            try fromBytes.merge(decoding: many.encoded())
            for sample in order {
                expected.merge(ExplorerCell([sample]))
                try fromBytes.merge(decoding: ExplorerCell([sample]).encoded())
            }
            #expect(fromBytes == expected)
        }
        // A scalar device-day: a few bytes instead of ~80.
        #expect(ExplorerCell([.value(412_345)]).encoded().count <= 8)
        #expect(ExplorerCell([.value(412_345), .value(1)]).encoded().first == 1)
        // Garbage in the compact form throws, or decodes to a cell that re-encodes to itself.
        let bytes = ExplorerCell([.histogram(launch)]).encoded()
        for length in 0..<bytes.count {
            #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: bytes[0..<length]) }
        }
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: bytes + [0]) }
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x5A
            if let cell = try? ExplorerCell(decoding: flipped) {
                #expect((try? ExplorerCell(decoding: cell.encoded())) == cell)
            }
        }
        // x must be positive: (0, 5) is no device-day.
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [2, 0, 10, 0]) }
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [3, 0, 10]) }
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [4, 0]) }
        // Version 2 without buckets (written before versions 3 and 4) still reads, to the cell 3 writes.
        let scalar = try ExplorerCell(decoding: [2, 2, 10, 0])
        #expect(scalar == ExplorerCell([.value(5)]) && scalar.encoded() == [3, 2, 10])
        #expect(try ExplorerCell(decoding: [2, 14, 0, 0]) == ExplorerCell([.rate(numerator: 0, hours: 7)]))
        #expect(ExplorerCell([.rate(numerator: 0, hours: 7)]).encoded() == [4, 14])
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [3, 2, 10, 0]) }
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [4, 14, 0]) }
    }

    @Test("hours of whole seconds or milliseconds encode in a few bytes and read back to the same double")
    func hoursForms() throws {
        // (hours, bytes of the whole cell: version 3, x, y = 3)
        let cases: [(Double, Int)] = [
            (12_449 / 3_600, 5), (1 / 3_600, 3), (86_399 / 3_600, 5), (0.1, 4), (1.0 / 3.0, 4),
            (12_449_001 / 3_600_000, 6), (1 / 3_600_000, 3), (2.5, 5),
            (.pi, 11), (1e-300, 11), (4_503_599_627_370_495.5, 11),
        ]
        for (hours, size) in cases {
            let cell = ExplorerCell([.rate(numerator: 3, hours: hours)])
            let bytes = cell.encoded()
            #expect(bytes.first == 3, "\(hours)")
            #expect(bytes.count == size, "\(hours): \(bytes)")
            let decoded = try ExplorerCell(decoding: bytes)
            #expect(decoded == cell, "\(hours)")
            #expect(decoded.moments.meanX.bitPattern == hours.bitPattern, "\(hours)")
            #expect(decoded.encoded() == bytes)
        }
        // Tag 3 with m = 0 is no number; tag 5 is 1 / 3,600,000 hours, tag 7 is 1 / 3,600.
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: [3, 3, 6]) }
        #expect(try ExplorerCell(decoding: [3, 5, 6]).moments.meanX == 1 / 3_600_000)
        #expect(try ExplorerCell(decoding: [3, 7, 6]).moments.meanX == 1 / 3_600)
        // Histogram bounds in those forms too.
        let buckets = [Bucket(start: 0.25, end: 1.5, count: 3), Bucket(start: 1.5, end: .pi, count: 1)]
        let cell = ExplorerCell([.histogram(buckets)])
        #expect(try ExplorerCell(decoding: cell.encoded()) == cell)
    }

    @Test("truncated, extended, altered and random bytes throw and never trap")
    func refusesGarbage() throws {
        let bytes = ExplorerCell(Self.samples(seed: 11, count: 300)).encoded()
        for length in 0..<bytes.count {
            #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: bytes[0..<length]) }
        }
        #expect(throws: SketchDecodingError.self) { try ExplorerCell(decoding: bytes + [0]) }
        var version = bytes
        version[0] = 5
        #expect(throws: SketchDecodingError.unsupportedVersion(5)) { try ExplorerCell(decoding: version) }
        // Flipping any single byte either throws or decodes to a cell that re-encodes to valid bytes.
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x5A
            if let cell = try? ExplorerCell(decoding: flipped) {
                #expect((try? ExplorerCell(decoding: cell.encoded())) == cell)
            }
        }
        var draws = Draws(seed: 99)
        var decoded = 0
        for _ in 0..<3_000 {
            let length = Int(draws.uniform(0, 200))
            var random = (0..<length).map { _ in UInt8(draws.uniform(0, 256).rounded(.down)) }
            if !random.isEmpty, draws.uniform(0, 1) < 0.5 { random[0] = 1 }  // get past the version byte
            if let cell = try? ExplorerCell(decoding: random) {
                decoded += 1
                #expect((try? ExplorerCell(decoding: cell.encoded())) == cell)
            }
        }
        #expect(decoded < 30)
    }

    @Test("a map of cells round-trips, skips unwanted metrics undecoded, merges, and refuses garbage")
    func cellMap() throws {
        typealias Key = ExplorerCellMap.Key
        var map = ExplorerCellMap([
            Key(metric: "memory.peak", subject: ""): ExplorerCell(Self.samples(seed: 5, count: 80)),
            Key(metric: "launch.time_to_first_draw", subject: ""): ExplorerCell([
                .histogram([Bucket(start: 0, end: 10, count: 3)])
            ]),
            Key(metric: "animation.signpost_hitch_ratio", subject: "Feed/Scroll"): ExplorerCell([.value(4)]),
            // Subjects beyond ASCII sort as Key does (the encoder compares bytes only for ASCII).
            Key(metric: "animation.signpost_hitch_ratio", subject: "Ärger/Scroll"): ExplorerCell([.value(5)]),
            Key(metric: "animation.signpost_hitch_ratio", subject: "Zoo/Scroll"): ExplorerCell([.value(6)]),
        ])
        let bytes = map.encoded()
        #expect(try ExplorerCellMap(decoding: bytes) == map)
        #expect(try ExplorerCellMap(decoding: bytes).encoded() == bytes)
        let memory = try ExplorerCellMap(decoding: bytes, only: ["memory.peak"])
        #expect(Array(memory.cells.keys) == [Key(metric: "memory.peak", subject: "")])
        // Walked cell by cell: every entry once, in key order, its bytes the cell's own.
        var walked: [Key] = []
        try ExplorerCellMap.forEachCell(in: bytes) { key, cell throws(SketchDecodingError) in
            walked.append(key)
            #expect(Array(cell) == map.cells[key]?.encoded())
        }
        #expect(walked == map.cells.keys.sorted())
        map.merge(map)
        #expect(map.cells[Key(metric: "memory.peak", subject: "")]?.deviceDays == 160)
        for length in 0..<bytes.count {
            #expect(throws: SketchDecodingError.self) { try ExplorerCellMap(decoding: bytes[0..<length]) }
        }
        #expect(throws: SketchDecodingError.self) { try ExplorerCellMap(decoding: bytes + [0]) }
        var draws = Draws(seed: 7)
        for n in 0..<4_000 {
            var random = (0..<Int(draws.uniform(0, 120))).map { _ in UInt8(draws.uniform(0, 256).rounded(.down)) }
            if !random.isEmpty { random[0] = UInt8(1 + n % 2) }
            if let decoded = try? ExplorerCellMap(decoding: random) {
                #expect((try? ExplorerCellMap(decoding: decoded.encoded())) == decoded)
            }
        }
    }

    /// `ExplorerCell.appendMerged` into a new buffer: the merged bytes, or `nil` where it declines.
    static func mergedFromBytes(_ stored: [UInt8], _ incoming: ExplorerCell) throws -> [UInt8]? {
        var out: [UInt8] = []
        var scratch: [UInt8] = []
        return try ExplorerCell.appendMerged(stored: stored, with: incoming, into: &out, scratch: &scratch) ? out : nil
    }

    @Test("a stored cell merged from its bytes writes what decoding, merging and encoding writes, or declines")
    func cellMergedFromBytes() throws {
        func slow(_ stored: [UInt8], _ incoming: ExplorerCell) throws -> [UInt8] {
            var cell = try ExplorerCell(decoding: stored)
            cell.merge(incoming)
            return cell.encoded()
        }
        var fast = 0
        for seed in UInt64(1)...200 {
            let stored = ExplorerCell(Self.samples(seed: seed, count: 2 + Int(seed % 40))).encoded()
            let incoming = ExplorerCell(Self.samples(seed: seed &* 7 &+ 3, count: 1 + Int(seed % 5)))
            let merged = try Self.mergedFromBytes(stored, incoming)
            if merged != nil { fast += 1 }
            #expect(try merged ?? slow(stored, incoming) == slow(stored, incoming), "seed \(seed)")
        }
        #expect(fast == 200)
        // Zeros only on either side, and values beside them: the same bytes.
        let zeros = ExplorerCell([.value(0), .value(0)])
        let values = ExplorerCell([.value(3), .value(4_000)])
        #expect(try Self.mergedFromBytes(zeros.encoded(), values) == slow(zeros.encoded(), values))
        #expect(try Self.mergedFromBytes(values.encoded(), zeros) == slow(values.encoded(), zeros))
        // Declined: a stored cell of one device-day (version 2), an empty side, a merge that
        // would collapse the sketch's lowest buckets or coarsen the histogram's.
        let one = ExplorerCell([.value(5)])
        #expect(try Self.mergedFromBytes(one.encoded(), values) == nil)
        #expect(try Self.mergedFromBytes(values.encoded(), ExplorerCell()) == nil)
        let far = ExplorerCell([.value(1e30)])
        #expect(try Self.mergedFromBytes(values.encoded(), far) == nil)
        let wide = ExplorerCell(
            (0..<100).map { .histogram([Bucket(start: Double($0) * 10, end: Double($0) * 10 + 10, count: 1)]) })
        let shifted = ExplorerCell(
            (0..<100).map { .histogram([Bucket(start: Double($0) * 10 + 5, end: Double($0) * 10 + 15, count: 1)]) })
        #expect(try Self.mergedFromBytes(wide.encoded(), shifted) == nil)
        // Bytes that do not read throw, as decoding does.
        #expect(throws: SketchDecodingError.self) {
            try Self.mergedFromBytes(Array(values.encoded().dropLast()), values)
        }
    }

    @Test("two encoded maps merge as bytes to what decoding, merging and encoding makes")
    func cellMapMergedAsBytes() throws {
        typealias Key = ExplorerCellMap.Key
        let metrics = ["launch.time_to_first_draw", "memory.peak", "termination.background.abnormal.per_device_day"]
        // Random maps over a few metrics and subjects (some keys shared, some not; one subject
        // beyond ASCII in some maps, which takes the decoded path).
        func map(seed: UInt64, beyondASCII: Bool) -> ExplorerCellMap {
            var draws = Draws(seed: seed)
            var cells: [Key: ExplorerCell] = [:]
            for metric in metrics {
                for subject in ["", "Feed/Scroll", beyondASCII ? "Ärger" : "Zoo"] where draws.uniform(0, 1) < 0.6 {
                    cells[Key(metric: metric, subject: subject)] = ExplorerCell(
                        Self.samples(seed: seed &* 31 &+ UInt64(cells.count), count: 1 + Int(draws.uniform(0, 6))))
                }
            }
            return ExplorerCellMap(cells)
        }
        var merges = 0
        for seed in UInt64(1)...60 {
            let stored = map(seed: seed, beyondASCII: seed % 5 == 0)
            let incoming = map(seed: seed + 1_000, beyondASCII: seed % 7 == 0)
            var expected = stored
            expected.merge(incoming)
            let merged = try ExplorerCellMap.merging(encoded: stored.encoded(), with: incoming.encoded())
            #expect(merged == expected.encoded(), "seed \(seed)")
            merges += stored.cells.keys.filter { incoming.cells[$0] != nil }.count
        }
        #expect(merges > 20, "shared cells merged: \(merges)")
        // Into nothing, and from a version-1 map (whole ids): the same as decoding.
        let one = map(seed: 3, beyondASCII: false)
        #expect(try ExplorerCellMap.merging(encoded: ExplorerCellMap().encoded(), with: one.encoded()) == one.encoded())
        var old: [UInt8] = [1, 1]
        let cell = ExplorerCell([.value(2)])
        old += [11] + Array("memory.peak".utf8) + [0, UInt8(cell.encoded().count)] + cell.encoded()
        var expected = try ExplorerCellMap(decoding: old)
        expected.merge(one)
        #expect(try ExplorerCellMap.merging(encoded: old, with: one.encoded()) == expected.encoded())
        // Either side that does not read throws.
        #expect(throws: SketchDecodingError.self) {
            try ExplorerCellMap.merging(encoded: Array(one.encoded().dropLast()), with: one.encoded())
        }
        #expect(throws: SketchDecodingError.self) { try ExplorerCellMap.merging(encoded: old, with: [9]) }
    }

    @Test("a builder (cells by ordinal) makes the map adding each sample to a map makes, and merges the same")
    func builderMatchesMap() throws {
        typealias Key = ExplorerCellMap.Key
        // Catalog metrics of two categories, one kept by ordinal in a memory row and one not (a
        // launch metric added to it), a signpost series, a metric outside the catalog, a refused sample.
        let entries: [(Key, Int?)] = [
            (Key(metric: "memory.peak", subject: ""), ExplorerCatalog.ordinals["memory.peak"]),
            (
                Key(metric: "memory.average_suspended", subject: ""),
                ExplorerCatalog.ordinals["memory.average_suspended"]
            ),
            (
                Key(metric: "launch.time_to_first_draw", subject: ""),
                ExplorerCatalog.ordinals["launch.time_to_first_draw"]
            ),
            (
                Key(metric: "animation.signpost_hitch_time_ratio", subject: "Feed/Scroll"),
                ExplorerCatalog.ordinals["animation.signpost_hitch_time_ratio"]
            ),
            (Key(metric: "future.metric", subject: ""), nil),
        ]
        #expect(entries.prefix(4).allSatisfy { $0.1 != nil })
        var adds = 0
        for seed in UInt64(1)...40 {
            var draws = Draws(seed: seed)
            var map = ExplorerCellMap()
            var builder = ExplorerCellMapBuilder(category: .memory)
            var halves = [ExplorerCellMapBuilder(category: .memory), ExplorerCellMapBuilder(category: .launch)]
            // The same adds kept as bytes, and replayed.
            var pending = ExplorerPendingRow()
            for (n, sample) in Self.samples(seed: seed, count: 30).enumerated() {
                let (entry, ordinal) = entries[Int(draws.uniform(0, Double(entries.count) - 0.001))]
                let prepared = n % 11 == 0 ? nil : ExplorerCell.prepare(sample)
                map.add(prepared, at: entry)
                builder.add(prepared, at: entry, ordinal: ordinal)
                if let ordinal, entry.subject.isEmpty, n % 3 == 0 {
                    pending.add(prepared, ordinal: ordinal)
                } else {
                    pending.add(prepared, at: entry, ordinal: ordinal)
                }
                halves[n % 2].add(prepared, at: entry, ordinal: ordinal)
                adds += 1
            }
            #expect(builder.map == map, "seed \(seed)")
            let replayed = try pending.builder(category: .memory)
            #expect(replayed.map == map, "seed \(seed)")
            #expect(replayed.encoded() == builder.encoded(), "seed \(seed)")
            #expect(builder.map.encoded() == map.encoded(), "seed \(seed)")
            // Its bytes made without the map, and merged into a stored row, are the map's.
            #expect(builder.encoded() == map.encoded(), "seed \(seed)")
            let stored = halves[1].map.encoded()
            #expect(
                try builder.merged(into: stored) == ExplorerCellMap.merging(encoded: stored, with: map), "seed \(seed)")
            // Two categories' builders, their maps merged: the same cells (sums up to rounding, so the
            // device-days and buckets are compared).
            var merged = halves[0].map
            merged.merge(halves[1].map)
            #expect(merged.cells.keys.sorted() == map.cells.keys.sorted(), "seed \(seed)")
            for (key, cell) in map.cells {
                #expect(merged.cells[key]?.deviceDays == cell.deviceDays, "seed \(seed) \(key)")
                #expect(merged.cells[key]?.buckets == cell.buckets, "seed \(seed) \(key)")
            }
        }
        #expect(adds == 1_200)
        #expect(ExplorerCellMapBuilder(category: .memory).map == ExplorerCellMap())
        #expect(try ExplorerPendingRow().builder(category: .memory).map == ExplorerCellMap())
        #expect(ExplorerCellMapBuilder(category: nil).map == ExplorerCellMap())
        #expect(ExplorerCellMapBuilder(category: .memory).encoded() == ExplorerCellMap().encoded())
    }

    @Test("a pending row replays fractional, huge and zero numbers and histogram bounds bit for bit")
    func pendingRowNumbersExact() throws {
        let ordinals = try [
            "memory.peak", "memory.average_suspended",
        ].map { try #require(ExplorerCatalog.ordinals[$0]) }
        let samples: [ExplorerSample] = [
            .value(0.1), .value(-0.0), .value(0), .value(1e300), .value(0x1p53 + 2), .value(123_456.789),
            .rate(numerator: 2.5, hours: 0.3), .rate(numerator: 7, hours: 1e-9),
            .histogram([Bucket(start: 0.25, end: 10.75, count: 3), Bucket(start: 11, end: 1e12, count: 1)]),
        ]
        var builder = ExplorerCellMapBuilder(category: .memory)
        var pending = ExplorerPendingRow()
        for (n, sample) in samples.enumerated() {
            let prepared = ExplorerCell.prepare(sample)
            #expect(prepared != nil, "sample \(n)")
            builder.add(prepared, ordinal: ordinals[n % 2])
            pending.add(prepared, ordinal: ordinals[n % 2])
        }
        let replayed = try pending.builder(category: .memory)
        #expect(replayed.encoded() == builder.encoded())
        #expect(replayed.map == builder.map)
        #expect(pending.byteCount < samples.count * 40)
    }

    @Test("histogram buckets already in a cell are added in place, to what the merge makes")
    func bucketsAddedInPlace() {
        let layout = (0..<8).map { Bucket(start: Double($0) * 10, end: Double($0) * 10 + 10, count: 1) }
        var draws = Draws(seed: 9)
        for _ in 0..<200 {
            let stored = layout.filter { _ in draws.uniform(0, 1) < 0.8 }
            let incoming = layout.filter { _ in draws.uniform(0, 1) < 0.5 }
                .map { Bucket(start: $0.start, end: $0.end, count: Int64(draws.uniform(1, 50))) }
            var inPlace = stored
            let added = ExplorerCell.addInPlace(incoming, to: &inPlace)
            let subset = incoming.allSatisfy { bucket in
                stored.contains { $0.start == bucket.start && $0.end == bucket.end }
            }
            #expect(added == subset)
            #expect(inPlace == (added ? ExplorerCell.mergeBuckets(stored, incoming) : stored))
        }
    }

    @Test("map ids are numbered (version 3), front-coded when not in the list; versions 2 and 1 are still read")
    func cellMapIDs() throws {
        typealias Key = ExplorerCellMap.Key
        let names = [
            "termination.background.abnormal.per_device_day", "termination.background.abnormal.per_foreground_hour",
            "termination.background.app_watchdog.per_device_day",
        ]
        let cell = ExplorerCell([.value(2)]).encoded()
        let map = ExplorerCellMap(
            Dictionary(uniqueKeysWithValues: names.map { (Key(metric: $0, subject: ""), ExplorerCell([.value(2)])) }))
        // Every cell a device-day's: written as version 4, read as the version 3 it was made of.
        let bytes = map.encoded()
        #expect(bytes.first == 4)
        let version3 = try ExplorerCellMap.readable(bytes)
        #expect(version3.first == 3)
        // Each id is one byte: number, subject length, cell length, cell.
        #expect(version3.count == 2 + names.count * (3 + cell.count), "\(version3.count) bytes")
        #expect(try ExplorerCellMap(decoding: bytes) == map)
        // Every catalog id is numbered, each once; the list keeps its first entries as they were.
        #expect(Set(ExplorerCatalog.metrics.map(\.id)).isSubset(of: Set(ExplorerCellMap.numberedIDs)))
        #expect(Set(ExplorerCellMap.numberedIDs).count == ExplorerCellMap.numberedIDs.count)
        #expect(ExplorerCellMap.numberedIDs.first == "launch.time_to_first_draw")
        // Ids outside the list (a newer catalog's) are front-coded after a 0, beside numbered ones.
        let custom = ["custom.metric.alpha", "custom.metric.beta"]
        var mixed = map
        for name in custom { mixed.cells[Key(metric: name, subject: "")] = ExplorerCell([.value(3)]) }
        let mixedBytes = mixed.encoded()
        #expect(try ExplorerCellMap(decoding: mixedBytes) == mixed)
        #expect(mixedBytes.first == 3)
        #expect(mixedBytes.count < version3.count + custom[0].utf8.count + 6 + 2 * (4 + cell.count) + 6)
        // Version 2, as rows written before it hold: every id front-coded.
        var two: [UInt8] = [2, UInt8(names.count)]
        var previous: [UInt8] = []
        for name in names {
            let id = Array(name.utf8)
            var shared = 0
            while shared < min(id.count, previous.count), id[shared] == previous[shared] { shared += 1 }
            two += [UInt8(shared), UInt8(id.count - shared)] + id[shared...] + [0, UInt8(cell.count)] + cell
            previous = id
        }
        #expect(try ExplorerCellMap(decoding: two) == map)
        var doubled = map
        doubled.merge(map)
        #expect(try ExplorerCellMap.merging(encoded: two, with: map.encoded()) == doubled.encoded())
        // Version 1, as PostgreSQL rows written before it hold: whole ids, no prefix lengths.
        var old: [UInt8] = [1, UInt8(names.count)]
        for name in names {
            old += [UInt8(name.utf8.count)] + Array(name.utf8) + [0, UInt8(cell.count)] + cell
        }
        #expect(try ExplorerCellMap(decoding: old) == map)
        // An unknown number, and a prefix longer than the previous id, are refused.
        var unknown = bytes
        unknown[2] = UInt8(ExplorerCellMap.numberedIDs.count + 1)
        #expect(throws: SketchDecodingError.self) { try ExplorerCellMap(decoding: unknown) }
        var bad = two
        bad[2] = 1
        #expect(throws: SketchDecodingError.self) { try ExplorerCellMap(decoding: bad) }
    }

    @Test("rows encode with the issue's snake_case keys and explicit nulls")
    func rowJSON() throws {
        let row = ExplorerRow(
            metric: try Self.metric("memory.peak"), cell: ExplorerCell((0..<10).map { .value(Double($0)) }),
            groups: ExplorerGroupKeys(version: "2.0", appState: "all"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(row)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "category", "metric", "unit", "version", "app_state", "p50", "p90", "mean", "device_days",
                "error_margin", "p50_error_margin", "p90_error_margin", "goal", "insufficient_data",
            ])
        #expect(object["p50"] is NSNull && object["goal"] is NSNull)
        #expect(object["insufficient_data"] as? Bool == true && object["device_days"] as? Int == 10)
        #expect(object["unit"] as? String == "bytes" && object["category"] as? String == "memory")
        #expect(try JSONDecoder().decode(ExplorerRow.self, from: JSONEncoder().encode(row)) == row)
    }
}
