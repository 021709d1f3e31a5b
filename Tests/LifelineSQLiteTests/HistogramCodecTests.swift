import LifelineModel
import LifelineSQLite
import LifelineStorage
import Testing

@Suite("Histogram codec")
struct HistogramCodecTests {
    @Test("buckets round-trip, including gaps, nulls, fractions, negatives and huge values")
    func roundTrip() throws {
        let cases: [[HistogramBucket]] = [
            [],
            [HistogramBucket(start: 0, end: 10, count: 5)],
            [
                HistogramBucket(start: 1_000, end: 1_010, count: 50),
                HistogramBucket(start: 1_010, end: 1_020, count: 60),
                HistogramBucket(start: 5_000, end: 5_000, count: 0),
            ],
            [
                HistogramBucket(start: nil, end: 3, count: 1), HistogramBucket(start: 0.5, end: nil, count: 2),
                HistogramBucket(start: -20, end: -10, count: -1),
                HistogramBucket(start: 1e300, end: 2e300, count: .max),
                HistogramBucket(start: 12.25, end: 13, count: .min),
            ],
            [
                HistogramBucket(start: 0, end: 30, count: 1), HistogramBucket(start: 30, end: 30, count: 2),
                HistogramBucket(start: 90, end: 60, count: 3), HistogramBucket(start: 60, end: 75, count: -4),
                HistogramBucket(start: 75, end: 9.5, count: 5), HistogramBucket(start: 9.5, end: 12, count: 6),
                HistogramBucket(start: nil, end: nil, count: 7), HistogramBucket(start: 12, end: 15, count: 8),
            ],
        ]
        for buckets in cases {
            #expect(try HistogramCodec.decode(HistogramCodec.encode(buckets)) == buckets)
        }
    }

    @Test("contiguous integral buckets take about three bytes each")
    func compact() throws {
        var buckets: [HistogramBucket] = []
        for index in 0..<14 {
            let start = Double(200 + index * 50)
            buckets.append(HistogramBucket(start: start, end: start + 50, count: 4_000))
        }
        // Header 2 bytes, the first bucket (a gap from 0) 5, then 3 per contiguous bucket.
        #expect(HistogramCodec.encode(buckets).count <= 2 + 5 + 13 * 3)
        #expect(try HistogramCodec.decode(HistogramCodec.encode(buckets)) == buckets)
    }

    @Test("damaged input is an error, not a crash")
    func damaged() {
        #expect(throws: StoreError.self) { try HistogramCodec.decode([]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([9]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([1, 0x80]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([1, 0]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([1, 1, 1, 3, 1, 2]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([1, 1, 0x80]) }
        #expect(throws: StoreError.self) { try HistogramCodec.decode([1, 1, 6]) }
    }
}
