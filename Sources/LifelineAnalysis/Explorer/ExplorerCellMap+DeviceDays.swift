/// The map's version 4: a row whose every cell is a device-day's compact form (cell versions 2–4),
/// every metric numbered (``numberedIDs``) and without a subject. Most of the explorer's fine rows
/// are such (one payload's), and a termination row's 38 entries spent 6–8 bytes each on a number,
/// an empty subject, a length, a version and the same `x` (the device-day's hours, or 1) again
/// and again, for a `y` of one byte.
///
/// ```
/// u8      version (4)
/// varint  n                 entries (1…maxEntries), ascending by metric number
/// varint  m                 shared x values (0…3), then m numbers (the cell encoding's numbers)
/// n × varint h = d << 3 | k, d ≥ 1 the entry's number minus the previous entry's (the first: its number):
///     k 0…2   a version-3 cell whose x is shared value k, then the number y
///     k 4…6   a version-4 cell (y = 0) whose x is shared value k − 4
///     k 3     varint L, then L bytes: the cell as version 3 holds it (a cell version 2–4)
/// ```
///
/// Every encoder writes version 3 and hands it to ``compacted(_:)``, which writes version 4 where
/// the row qualifies (a map still always encodes to the same bytes); every reader hands the bytes
/// to ``readable(_:)``, which gives version 3 back exactly.
extension ExplorerCellMap {
    package static let deviceDaysVersion: UInt8 = 4
    /// The most shared x values.
    static let sharedLimit = 3
    /// `k` of an entry whose cell follows whole.
    static let wholeCell: UInt64 = 3

    /// The position of each numbered id (by number − 1) in the ids' byte order, the order version 3
    /// writes, and the number at each position (computed here, never stored: appending to
    /// ``numberedIDs`` may move them).
    private static let byteOrder: (ranks: [Int], numbers: [Int]) = {
        let order = numberedIDBytes.indices.sorted {
            numberedIDBytes[$0].lexicographicallyPrecedes(numberedIDBytes[$1])
        }
        var ranks = [Int](repeating: 0, count: order.count)
        for (rank, index) in order.enumerated() { ranks[index] = rank }
        return (ranks, order.map { $0 + 1 })
    }()

    /// `bytes` (version 3, as this type writes them) as version 4 when the row qualifies and that
    /// is shorter, else `bytes` unchanged.
    package static func compacted(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.first == encodingVersion, let entries = deviceDayEntries(bytes) else { return bytes }
        // The x values the cells of versions 3 and 4 share, the most used first (ties: the first
        // in the row). A row has a few distinct ones (1, the day's hours): lists, no hashing.
        var distinct: [(x: ArraySlice<UInt8>, uses: Int)] = []
        for entry in entries {
            guard let x = entry.x else { continue }
            if let index = distinct.firstIndex(where: { $0.x == x }) {
                distinct[index].uses += 1
            } else {
                distinct.append((x, 1))
            }
        }
        var shared: [ArraySlice<UInt8>] = []
        while shared.count < sharedLimit,
            let best = distinct.indices.max(by: { distinct[$0].uses < distinct[$1].uses }),
            distinct[best].uses > 0
        {
            shared.append(distinct[best].x)
            distinct[best].uses = 0
        }
        // The entries by number (each number once: a row's keys are distinct).
        var byNumber = [Int](repeating: -1, count: numberedIDBytes.count + 1)
        for (index, entry) in entries.enumerated() {
            guard byNumber[entry.number] < 0 else { return bytes }
            byNumber[entry.number] = index
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        out.append(deviceDaysVersion)
        ByteWriter.varint(UInt64(entries.count), into: &out)
        ByteWriter.varint(UInt64(shared.count), into: &out)
        for x in shared { out.append(contentsOf: x) }
        var previous = 0
        for index in byNumber where index >= 0 {
            let entry = entries[index]
            let d = UInt64(entry.number - previous) << 3
            previous = entry.number
            let cell = bytes[entry.cell]
            if let x = entry.x, let k = shared.firstIndex(of: x) {
                let zero = cell.first == ExplorerCell.singleDeviceDayVersions.zero
                ByteWriter.varint(d | UInt64(zero ? k + 4 : k), into: &out)
                if !zero { out.append(contentsOf: cell[(cell.startIndex + 1 + x.count)...]) }
            } else {
                ByteWriter.varint(d | wholeCell, into: &out)
                ByteWriter.varint(UInt64(cell.count), into: &out)
                out.append(contentsOf: cell)
            }
        }
        // A row of one histogram, say, is no shorter: version 4 only where it saves bytes.
        return out.count < bytes.count ? out : bytes
    }

    /// One entry of a version-3 row that qualifies: its number, its cell's range and, for cell
    /// versions 3 and 4, the bytes of its x.
    private struct DeviceDayEntry {
        var number: Int
        var cell: Range<Int>
        var x: ArraySlice<UInt8>?
    }

    /// The entries of version-3 `bytes` when the row qualifies for version 4, else `nil`.
    private static func deviceDayEntries(_ bytes: [UInt8]) -> [DeviceDayEntry]? {
        var reader = ByteReader(bytes)
        _ = reader.byte()
        guard let count = try? reader.varint(), count > 0, count <= UInt64(maxEntries) else { return nil }
        var entries: [DeviceDayEntry] = []
        entries.reserveCapacity(Int(count))
        let versions = ExplorerCell.singleDeviceDayVersions
        for _ in 0..<Int(count) {
            guard let number = try? reader.varint(), number > 0, number <= UInt64(numberedIDBytes.count),
                (try? reader.varint()) == 0,  // no subject
                let length = try? reader.varint(), length <= UInt64(ExplorerCell.maxEncodedSize),
                let cell = try? reader.take(Int(length)), let version = cell.first,
                version == versions.buckets || version == versions.bucketless || version == versions.zero
            else { return nil }
            var x: ArraySlice<UInt8>?
            if version != versions.buckets {
                // x, then y unless it is 0, then nothing: what version 4 writes back exactly.
                var numberReader = ByteReader(cell)
                _ = numberReader.byte()
                guard (try? ExplorerCell.readNumber(&numberReader)) != nil else { return nil }
                x = cell[(cell.startIndex + 1)..<numberReader.position]
                if version == versions.bucketless, (try? ExplorerCell.readNumber(&numberReader)) == nil { return nil }
                guard numberReader.atEnd else { return nil }
            }
            entries.append(DeviceDayEntry(number: Int(number), cell: cell.startIndex..<cell.endIndex, x: x))
        }
        return reader.atEnd ? entries : nil
    }

    /// Version-4 `bytes` as the version-3 bytes they were made of; any other version as it is.
    /// Throws ``SketchDecodingError`` when version-4 bytes do not read (the cells themselves are
    /// checked by whoever decodes them).
    package static func readable(_ bytes: [UInt8]) throws(SketchDecodingError) -> [UInt8] {
        guard bytes.first == deviceDaysVersion else { return bytes }
        var reader = ByteReader(bytes)
        _ = reader.byte()
        let count = try reader.varint()
        guard count > 0, count <= UInt64(min(maxEntries, numberedIDBytes.count)) else {
            throw .invalid("a device-day row's entry count")
        }
        let sharedCount = try reader.varint()
        guard sharedCount <= UInt64(sharedLimit) else { throw .invalid("more than \(sharedLimit) shared values") }
        var shared: [ArraySlice<UInt8>] = []
        for _ in 0..<Int(sharedCount) {
            let start = reader.position
            _ = try ExplorerCell.readNumber(&reader)
            shared.append(bytes[start..<reader.position])
        }
        let versions = ExplorerCell.singleDeviceDayVersions
        // The cells one after the other, and where each lies, by its number's byte-order rank.
        var cells: [UInt8] = []
        cells.reserveCapacity(bytes.count + 2 * Int(count))
        var slots = [Range<Int>?](repeating: nil, count: numberedIDBytes.count)
        var number: UInt64 = 0
        for _ in 0..<Int(count) {
            let h = try reader.varint()
            let (d, k) = (h >> 3, h & 7)
            guard d >= 1, d <= UInt64(numberedIDBytes.count) - number else { throw .invalid("a metric number") }
            number += d
            let start = cells.count
            if k == wholeCell {
                let length = try reader.varint()
                guard length <= UInt64(ExplorerCell.maxEncodedSize) else { throw .invalid("a cell too long") }
                let cell = try reader.take(Int(length))
                guard let version = cell.first, (versions.buckets...versions.zero).contains(version) else {
                    throw .invalid("a device-day row's cell of another form")
                }
                cells.append(contentsOf: cell)
            } else {
                let index = Int(k & 3)
                guard k != 7, index < shared.count else { throw .invalid("an unknown shared value") }
                let zero = k >= 4
                cells.append(zero ? versions.zero : versions.bucketless)
                cells.append(contentsOf: shared[index])
                if !zero {
                    let y = reader.position
                    _ = try ExplorerCell.readNumber(&reader)
                    cells.append(contentsOf: bytes[y..<reader.position])
                }
            }
            slots[byteOrder.ranks[Int(number) - 1]] = start..<cells.count
        }
        guard reader.atEnd else { throw .trailingBytes }
        var out: [UInt8] = []
        out.reserveCapacity(cells.count + 4 * Int(count) + 4)
        writeHeader(count: Int(count), into: &out)
        for (rank, slot) in slots.enumerated() {
            guard let slot else { continue }
            ByteWriter.varint(UInt64(byteOrder.numbers[rank]), into: &out)
            out.append(0)  // no subject
            ByteWriter.varint(UInt64(slot.count), into: &out)
            out.append(contentsOf: cells[slot])
        }
        return out
    }
}
