/// A row of one payload's samples written without making its cells
/// (``ExplorerPendingRow/encodedAlone(category:)``).
extension ExplorerCellMap {
    /// The bytes ``ExplorerCellMapBuilder/encoded()`` makes of a row of one sample per catalog
    /// metric (no series), each cell the sample alone (``ExplorerCell/Prepared/encodesAlone``),
    /// without making the cells: `samples[i]` is ordinal `first + i`'s, `byteOrder` their ordinals
    /// in their ids' byte order, `count` how many samples there are, `capacity` the bytes to
    /// reserve. Each cell is written in place after a length byte, moved on in the rare case its
    /// length takes two.
    ///
    /// Where ``compacted(_:)`` would make the row version 4, it is written so straight from the
    /// samples (`numberOrder`: their ordinals in their numbers' order): making version 3 and
    /// reading it again to shorten it cost an iOS 27 report's new rows 28 % more time
    /// (`bench explorer-fold`). Else the version-3 bytes, which it would keep.
    static func encodeAlone(
        _ samples: [ExplorerCell.Prepared?], first: Int, byteOrder: [Int], numberOrder: [Int], count: Int,
        capacity: Int
    ) -> [UInt8] {
        if let bytes = deviceDaysAlone(
            samples, first: first, byteOrder: byteOrder, numberOrder: numberOrder, count: count)
        {
            return bytes
        }
        let ids = ExplorerCatalog.idBytes
        let numbers = ExplorerCatalog.numbers
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        writeHeader(count: count, into: &out)
        var previous: [UInt8] = []
        for ordinal in byteOrder {
            guard case .some(let sample) = samples[ordinal - first] else { continue }
            writeKey(ids[ordinal], [], number: numbers[ordinal], after: previous, into: &out)
            let lengthAt = out.count
            out.append(0)
            ExplorerCell.appendAlone(sample, to: &out)
            let length = out.count - lengthAt - 1
            if length < 0x80 {
                out[lengthAt] = UInt8(length)
            } else {
                var varint: [UInt8] = []
                ByteWriter.varint(UInt64(length), into: &varint)
                out.replaceSubrange(lengthAt..<(lengthAt + 1), with: varint)
            }
            previous = ids[ordinal]
        }
        return out
    }

    /// The version-4 bytes ``compacted(_:)`` makes of the row ``encodeAlone`` writes, made from its
    /// samples; `nil` where it keeps version 3 (no sample, a metric without a number, or no shorter).
    private static func deviceDaysAlone(
        _ samples: [ExplorerCell.Prepared?], first: Int, byteOrder: [Int], numberOrder: [Int], count: Int
    ) -> [UInt8]? {
        guard count > 0 else { return nil }
        let numbers = ExplorerCatalog.numbers
        // The x values of the bucketless cells, counted in version 3's order (its ties' order), as
        // ``compacted(_:)`` counts their bytes. One helper for both, generic over the value, cost
        // this path 5–8 % (`bench explorer-fold`: two more arrays per row); the loop is repeated.
        var distinct: [(x: Double, uses: Int)] = []
        for ordinal in byteOrder {
            guard case .some(let sample) = samples[ordinal - first] else { continue }
            guard numbers[ordinal] > 0 else { return nil }
            guard sample.buckets.isEmpty else { continue }
            if let index = distinct.firstIndex(where: { $0.x == sample.x }) {
                distinct[index].uses += 1
            } else {
                distinct.append((sample.x, 1))
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(3 * count + 16)
        out.append(deviceDaysVersion)
        ByteWriter.varint(UInt64(count), into: &out)
        let sharedAt = out.count
        out.append(0)
        var shared: [(x: Double, length: Int)] = []
        while shared.count < sharedLimit,
            let best = distinct.indices.max(by: { distinct[$0].uses < distinct[$1].uses }),
            distinct[best].uses > 0
        {
            let start = out.count
            ExplorerCell.writeNumber(distinct[best].x, into: &out)
            shared.append((distinct[best].x, out.count - start))
            distinct[best].uses = 0
        }
        out[sharedAt] = UInt8(shared.count)
        // What version 3 would take: its header, then per entry number, subject, length and cell.
        var version3 = 1 + varintLength(count)
        var previous = 0
        for ordinal in numberOrder {
            guard case .some(let sample) = samples[ordinal - first] else { continue }
            let number = numbers[ordinal]
            let d = UInt64(number - previous) << 3
            previous = number
            let cellLength: Int
            if sample.buckets.isEmpty, let k = shared.firstIndex(where: { $0.x == sample.x }) {
                let zero = sample.y == 0
                ByteWriter.varint(d | UInt64(zero ? k + 4 : k), into: &out)
                let start = out.count
                if !zero { ExplorerCell.writeNumber(sample.y, into: &out) }
                cellLength = 1 + shared[k].length + out.count - start
            } else {
                ByteWriter.varint(d | wholeCell, into: &out)
                var cell: [UInt8] = []
                ExplorerCell.appendAlone(sample, to: &cell)
                ByteWriter.varint(UInt64(cell.count), into: &out)
                out.append(contentsOf: cell)
                cellLength = cell.count
            }
            version3 += varintLength(number) + 1 + varintLength(cellLength) + cellLength
        }
        return out.count < version3 ? out : nil
    }

    /// The bytes of `value` as a varint.
    private static func varintLength(_ value: Int) -> Int {
        var length = 1
        var rest = value >> 7
        while rest > 0 {
            length += 1
            rest >>= 7
        }
        return length
    }
}
