import LifelineAnalysis
import Testing

/// The map's version 4 (``ExplorerCellMap/compacted(_:)``, ``ExplorerCellMap/readable(_:)``): rows
/// whose every cell is a device-day's, written shorter, read back as the version 3 they were.
@Suite("Explorer rows of device-day cells in version 4")
struct ExplorerCellMapDeviceDaysTests {
    typealias Bucket = BucketDistribution.Bucket

    static func ordinal(_ id: String) throws -> Int {
        try #require(ExplorerCatalog.metrics.firstIndex { $0.id == id })
    }

    @Test("a termination row: shared x values once, a byte or two an entry, version 3 back exactly")
    func exactBytes() throws {
        var builder = ExplorerCellMapBuilder(category: .termination)
        // Numbers 29, 30 and 31 of the frozen table: 4 exits in 0.5 foreground hours, none of the other.
        builder.add(
            ExplorerCell.prepare(.value(4)),
            ordinal: try Self.ordinal("termination.foreground.normal_app.per_device_day"))
        builder.add(
            ExplorerCell.prepare(.rate(numerator: 4, hours: 0.5)),
            ordinal: try Self.ordinal("termination.foreground.normal_app.per_foreground_hour"))
        builder.add(
            ExplorerCell.prepare(.value(0)),
            ordinal: try Self.ordinal("termination.foreground.memory_resource_limit.per_device_day"))
        let bytes = builder.encoded()
        // Version 4, 3 entries, 2 shared x (1 and 1,800 s in hours), then #29 (d 29, k 0, y 4),
        // #30 (d 1, k 1, y 4), #31 (d 1, k 4: y = 0, x shared value 0).
        #expect(bytes == [0x04, 0x03, 0x02, 0x02, 0xA3, 0x38, 0xE8, 0x01, 0x08, 0x09, 0x08, 0x0C])
        // Version 3: entries in their ids' byte order, each number, no subject, length, cell.
        let version3: [UInt8] = [
            0x03, 0x03,
            0x1F, 0x00, 0x02, 0x04, 0x02,
            0x1D, 0x00, 0x03, 0x03, 0x02, 0x08,
            0x1E, 0x00, 0x04, 0x03, 0xA3, 0x38, 0x08,
        ]
        #expect(try ExplorerCellMap.readable(bytes) == version3)
        #expect(ExplorerCellMap.compacted(version3) == bytes)
        #expect(try ExplorerCellMap(decoding: bytes) == builder.map)
    }

    static let kinds: [ExplorerSample] = [
        .value(0), .value(1), .value(3), .value(0.1), .value(1e300), .value(250), .value(0x1p53 + 2),
        .rate(numerator: 0, hours: 0.604_166_666_666_666_6), .rate(numerator: 2, hours: 0.604_166_666_666_666_6),
        .rate(numerator: 7, hours: 1e-9), .rate(numerator: 1, hours: 24),
        .histogram([Bucket(start: 0, end: 10, count: 1), Bucket(start: 10, end: 20, count: 3)]),
    ]

    @Test("rows of every category and kind: the same map, version 4 where it applies and never longer")
    func roundTrips() throws {
        var draws = Draws(seed: 57)
        var compact = 0
        for category in ExplorerCategory.allCases {
            let ordinals = Array(try #require(ExplorerCatalog.ordinalRanges[category]))
            for round in 0..<25 {
                var builder = ExplorerCellMapBuilder(category: category)
                var pending = ExplorerPendingRow()
                for ordinal in ordinals where round == 0 || draws.uniform(0, 1) < 0.6 {
                    let sample = ExplorerCell.prepare(
                        Self.kinds[Int(draws.uniform(0, Double(Self.kinds.count) - 0.001))])
                    builder.add(sample, ordinal: ordinal)
                    pending.add(sample, ordinal: ordinal)
                }
                let bytes = builder.encoded()
                let version3 = try ExplorerCellMap.readable(bytes)
                #expect(version3.first == 3)
                #expect(ExplorerCellMap.compacted(version3) == bytes)
                #expect(try ExplorerCellMap(decoding: bytes) == builder.map)
                #expect(try pending.encodedAlone(category: category) == bytes)
                if bytes.first == ExplorerCellMap.deviceDaysVersion {
                    compact += 1
                    #expect(bytes.count < version3.count, "\(category) round \(round)")
                } else if category == .termination {
                    Issue.record("a termination row of one device-day in version 3, round \(round)")
                }
            }
        }
        #expect(compact > 4 * 25)
    }

    @Test("a series, a cell of two device-days: version 3; a merge reads version 4 and writes what decoding writes")
    func othersAndMerges() throws {
        let count = try Self.ordinal("termination.foreground.normal_app.per_device_day")
        let rate = try Self.ordinal("termination.foreground.normal_app.per_foreground_hour")
        var one = ExplorerCellMapBuilder(category: .termination)
        one.add(ExplorerCell.prepare(.value(2)), ordinal: count)
        one.add(ExplorerCell.prepare(.rate(numerator: 2, hours: 1.5)), ordinal: rate)
        let stored = one.encoded()
        #expect(stored.first == ExplorerCellMap.deviceDaysVersion)

        var series = ExplorerCellMapBuilder(category: .animation)
        series.add(
            ExplorerCell.prepare(.value(0.25)),
            at: ExplorerCellMap.Key(metric: "animation.signpost_hitch_time_ratio", subject: "scroll"), ordinal: nil)
        #expect(series.encoded().first == ExplorerCellMap.encodingVersion)

        // Another device-day of the same metrics: the merged cells are of two device-days (version 1).
        var other = ExplorerCellMapBuilder(category: .termination)
        other.add(ExplorerCell.prepare(.value(5)), ordinal: count)
        other.add(ExplorerCell.prepare(.rate(numerator: 5, hours: 3)), ordinal: rate)
        let merged = try other.merged(into: stored)
        var expected = try ExplorerCellMap(decoding: stored)
        expected.merge(other.map)
        #expect(merged == expected.encoded())
        #expect(merged.first == ExplorerCellMap.encodingVersion)
        var twice = try ExplorerCellMap(decoding: stored)
        twice.merge(try ExplorerCellMap(decoding: stored))
        #expect(try ExplorerCellMap.merging(encoded: stored, with: stored) == twice.encoded())

        // Disjoint metrics of device-days: still every cell a device-day's, so version 4.
        var disjoint = ExplorerCellMapBuilder(category: .termination)
        disjoint.add(
            ExplorerCell.prepare(.value(1)),
            ordinal: try Self.ordinal("termination.background.memory_pressure.per_device_day"))
        let both = try disjoint.merged(into: stored)
        #expect(both.first == ExplorerCellMap.deviceDaysVersion)
        var union = try ExplorerCellMap(decoding: stored)
        union.merge(disjoint.map)
        #expect(try ExplorerCellMap(decoding: both) == union)
    }

    @Test("bytes version 4 does not hold are refused, never trapped on")
    func refused() throws {
        let bad: [[UInt8]] = [
            [0x04],  // no count
            [0x04, 0x00, 0x00],  // no entry
            [0x04, 0x01, 0x04, 0x02, 0x02, 0x02, 0x02, 0x0A],  // four shared values
            [0x04, 0x01, 0x00, 0x08],  // shared value 0 of none
            [0x04, 0x01, 0x01, 0x02, 0x0F],  // k 7
            [0x04, 0x01, 0x01, 0x02, 0x04],  // d 0
            [0x04, 0x01, 0x01, 0x02, 0xC0, 0x08, 0x02],  // number 136, past the table
            [0x04, 0x01, 0x01, 0x02, 0x08],  // y missing
            [0x04, 0x01, 0x01, 0x02, 0x08, 0x02, 0x00],  // trailing bytes
            [0x04, 0x01, 0x00, 0x0B, 0x02, 0x01, 0x02],  // a whole cell of version 1's form
            [0x04, 0x02, 0x01, 0x02, 0x0C, 0x04],  // the same number twice (d 0)
        ]
        for bytes in bad {
            #expect(throws: SketchDecodingError.self, "\(bytes)") { try ExplorerCellMap(decoding: bytes) }
        }
        // Every byte of a real row changed to every value: a map or an error, never a trap.
        var builder = ExplorerCellMapBuilder(category: .termination)
        for (n, ordinal) in try #require(ExplorerCatalog.ordinalRanges[.termination]).prefix(8).enumerated() {
            builder.add(
                ExplorerCell.prepare(n % 2 == 0 ? .value(Double(n)) : .rate(numerator: 1, hours: 0.75)),
                ordinal: ordinal)
        }
        let row = builder.encoded()
        #expect(row.first == ExplorerCellMap.deviceDaysVersion)
        var read = 0
        for position in row.indices {
            for value in UInt8.min...UInt8.max {
                var mutated = row
                mutated[position] = value
                if (try? ExplorerCellMap(decoding: mutated)) != nil { read += 1 }
            }
        }
        #expect(read > 0)
    }
}
