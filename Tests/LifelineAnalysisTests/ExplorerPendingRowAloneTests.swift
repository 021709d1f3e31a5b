import LifelineAnalysis
import Testing

/// A pending row of one payload's samples, encoded straight from its bytes
/// (``ExplorerPendingRow/encodedAlone(category:)``): the builder's bytes exactly, or `nil`.
@Suite("Explorer rows of one payload encoded from their bytes")
struct ExplorerPendingRowAloneTests {
    typealias Bucket = BucketDistribution.Bucket

    /// Samples of every kind, including numbers a varint cannot hold and a negative zero.
    static let kinds: [ExplorerSample] = [
        .value(0.1), .value(-0.0), .value(0), .value(1e300), .value(0x1p53 + 2), .value(123_456.789), .value(250),
        .rate(numerator: 2.5, hours: 0.3), .rate(numerator: 7, hours: 1e-9), .rate(numerator: 0, hours: 24),
        .histogram([Bucket(start: 0.25, end: 10.75, count: 3), Bucket(start: 11, end: 1e12, count: 1)]),
        .histogram([Bucket(start: 0, end: 10, count: 1), Bucket(start: 10, end: 20, count: 3)]),
    ]

    static func ordinals(_ category: ExplorerCategory) throws -> [Int] {
        Array(try #require(ExplorerCatalog.ordinalRanges[category]))
    }

    @Test("one sample per metric, in any order, of any kind: the builder's bytes, in every category")
    func sameBytesAsTheBuilder() throws {
        var draws = Draws(seed: 27)
        var rows = 0
        for category in ExplorerCategory.allCases {
            for round in 0..<20 {
                var builder = ExplorerCellMapBuilder(category: category)
                var pending = ExplorerPendingRow()
                // Some of the category's metrics, shuffled (the fold adds them in the extractor's order).
                let metrics = try Self.ordinals(category).filter { _ in round == 0 || draws.uniform(0, 1) < 0.7 }
                let shuffled = metrics.map { ($0, draws.uniform(0, 1)) }.sorted { $0.1 < $1.1 }.map(\.0)
                for ordinal in shuffled {
                    let sample = ExplorerCell.prepare(
                        Self.kinds[Int(draws.uniform(0, Double(Self.kinds.count) - 0.001))])
                    builder.add(sample, ordinal: ordinal)
                    pending.add(sample, ordinal: ordinal)
                }
                let alone = try pending.encodedAlone(category: category)
                #expect(alone != nil, "\(category) round \(round)")
                #expect(alone == builder.encoded(), "\(category) round \(round)")
                // And it decodes to the builder's cells.
                #expect(try ExplorerCellMap(decoding: try #require(alone)) == builder.map)
                rows += 1
            }
        }
        #expect(rows == 20 * ExplorerCategory.allCases.count)
        // An empty row too.
        #expect(
            try ExplorerPendingRow().encodedAlone(category: .memory)
                == ExplorerCellMapBuilder(category: .memory).encoded())
    }

    @Test("a second sample of a metric, a series, a refused sample, another category's metric: left to the builder")
    func leftToTheBuilder() throws {
        let memory = try Self.ordinals(.memory)
        let launch = try Self.ordinals(.launch)
        let one = ExplorerCell.prepare(.value(3))
        var twice = ExplorerPendingRow()
        twice.add(one, ordinal: memory[0])
        twice.add(one, ordinal: memory[0])
        #expect(try twice.encodedAlone(category: .memory) == nil)
        var series = ExplorerPendingRow()
        series.add(one, ordinal: memory[0])
        series.add(
            one, at: ExplorerCellMap.Key(metric: "animation.signpost_hitch_ratio", subject: "scroll"), ordinal: nil)
        #expect(try series.encodedAlone(category: .memory) == nil)
        var refused = ExplorerPendingRow()
        refused.add(ExplorerCell.prepare(.value(-1)), ordinal: memory[0])
        #expect(try refused.encodedAlone(category: .memory) == nil)
        var foreign = ExplorerPendingRow()
        foreign.add(one, ordinal: launch[0])
        #expect(try foreign.encodedAlone(category: .memory) == nil)
        #expect(try foreign.encodedAlone(category: .launch) != nil)
        #expect(try foreign.encodedAlone(category: nil) == nil)
        // Each still replays through the builder.
        for row in [twice, series, refused, foreign] { _ = try row.builder(category: .memory).encoded() }
    }
}
