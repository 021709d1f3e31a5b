/// A row of one payload's samples written without making its cells
/// (``ExplorerPendingRow/encodedAlone(category:)``).
extension ExplorerCellMap {
    /// The bytes ``ExplorerCellMapBuilder/encoded()`` makes of a row of one sample per catalog
    /// metric (no series), each cell the sample alone (``ExplorerCell/Prepared/encodesAlone``),
    /// without making the cells: `samples[i]` is ordinal `first + i`'s, `byteOrder` their ordinals
    /// in their ids' byte order, `count` how many samples there are, `capacity` the bytes to
    /// reserve. Each cell is written in place after a length byte, moved on in the rare case its
    /// length takes two.
    static func encodeAlone(
        _ samples: [ExplorerCell.Prepared?], first: Int, byteOrder: [Int], count: Int, capacity: Int
    ) -> [UInt8] {
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
        return compacted(out)
    }
}
