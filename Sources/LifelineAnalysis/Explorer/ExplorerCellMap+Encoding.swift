/// The binary form of an ``ExplorerCellMap``, and the merge of stored bytes with new cells.
///
/// Binary form, version 3 (varints unsigned LEB128), the one written (and then shortened to version 4
/// when every cell is a device-day's, `ExplorerCellMap+DeviceDays.swift`):
///
/// ```
/// u8      version (3)
/// varint  n                        entries (≤ 4,096), ascending by (metric, subject), distinct
/// n × (varint t, [t = 0: varint p, varint m, m bytes], varint s, s bytes subject, varint c, c bytes ExplorerCell)
/// ```
///
/// A metric id is its number `t` ≥ 1 in ``numberedIDs`` (a list that is only ever appended to),
/// or, `t = 0`, front-coded: the first `p` bytes of the previous entry's id, then `m` bytes of its
/// own. Front-coded names were still ~26 bytes an entry, 64 % of a fine row's bytes on the
/// reference load; a number is one byte. Version 2 (written before) front-codes every id (no `t`),
/// version 1 has whole ids; all three are read.
///
/// A reader that wants some metrics skips the others' cells by their length without decoding them.
/// Decoding checks every length and every cell, so arbitrary bytes throw and never trap.
extension ExplorerCellMap {
    package static let encodingVersion: UInt8 = 3

    /// One entry as the encoding writes it: its id and subject as bytes, and its cell.
    /// `number`: the id's in ``numberedIDs`` (0: not there), found once by whoever makes the entry.
    /// A struct, not a tuple: a merge reading one field of an element of a list of tuples copied
    /// the whole tuple (its two arrays and its cell's two retained, then released), several times
    /// an entry. As a struct, `bench explorer-fold` merges a row 1.39× faster.
    package struct EncodingEntry {
        package var metric: [UInt8]
        package var subject: [UInt8]
        package var cell: ExplorerCell
        package var number: Int

        package init(_ metric: [UInt8], _ subject: [UInt8], _ cell: ExplorerCell, number: Int) {
            self.metric = metric
            self.subject = subject
            self.cell = cell
            self.number = number
        }
    }

    /// The version-3 bytes (entries in key order: a map always encodes to the same bytes).
    package func encoded() -> [UInt8] {
        Self.encode(orderedEntries().entries)
    }

    /// The version-3 bytes of `entries`, already in Key's order.
    package static func encode(_ entries: [EncodingEntry]) -> [UInt8] {
        var out: [UInt8] = []
        var previous: [UInt8] = []
        writeHeader(count: entries.count, into: &out)
        for entry in entries {
            write(entry.metric, entry.subject, entry.cell.encoded(), number: entry.number, after: previous, into: &out)
            previous = entry.metric
        }
        return compacted(out)
    }

    /// The entries in Key's order, ids and subjects as bytes, and whether every one is ASCII.
    /// Compared as bytes when they are (the same order, no String comparison); the indexes are
    /// sorted, not the entries.
    package func orderedEntries() -> (entries: [EncodingEntry], isASCII: Bool) {
        let keys = Array(cells.keys)
        let values = Array(cells.values)  // in the keys' order
        let metrics = keys.map { Array($0.metric.utf8) }
        let subjects = keys.map { Array($0.subject.utf8) }
        let ascii = metrics.allSatisfy(Self.isASCII) && subjects.allSatisfy(Self.isASCII)
        let order =
            ascii
            ? keys.indices.sorted { a, b in Self.compare(metrics[a], subjects[a], metrics[b], subjects[b]) < 0 }
            : keys.indices.sorted { keys[$0] < keys[$1] }
        return (
            order.map { EncodingEntry(metrics[$0], subjects[$0], values[$0], number: Self.numbers[metrics[$0]] ?? 0) },
            ascii
        )
    }

    /// The bytes of `stored` merged with `incoming`, both bytes ``encoded()`` wrote: `incoming`
    /// decoded, then merged as the variant taking a map does (SQLite's merge function
    /// `ll_merge_explorer_map`). Throws ``SketchDecodingError`` when either side does not read.
    package static func merging(
        encoded stored: some Collection<UInt8>, with incoming: some Collection<UInt8>
    ) throws(SketchDecodingError) -> [UInt8] {
        try merging(encoded: stored, with: try ExplorerCellMap(decoding: incoming))
    }

    /// The bytes of `stored` (as ``encoded()`` wrote them) merged with `incoming`, equal to
    /// decoding `stored`, merging and encoding, for less: the entry lists are merged in order, a
    /// stored cell `incoming` does not touch is copied as it is (checked for its length, not
    /// decoded), and only the cells both hold are decoded. A fold merges its held rows into the
    /// stored ones this way (encoding them first, to merge two byte strings, decoded them again).
    /// Throws ``SketchDecodingError`` when `stored` does not read.
    package static func merging(
        encoded stored: some Collection<UInt8>, with incoming: ExplorerCellMap
    ) throws(SketchDecodingError) -> [UInt8] {
        let (entries, ascii) = incoming.orderedEntries()
        return try merging(encoded: stored, with: entries, isASCII: ascii, map: { incoming })
    }

    /// ``merging(encoded:with:)`` of entries already in Key's order (`isASCII`: every id and
    /// subject is); `map` makes them a map for the decoded path ids beyond ASCII take.
    package static func merging(
        encoded stored: some Collection<UInt8>, with b: [EncodingEntry], isASCII ascii: Bool,
        map incoming: () -> ExplorerCellMap
    ) throws(SketchDecodingError) -> [UInt8] {
        let a = try RawEntries(Array(stored))
        guard a.isASCII, ascii else {
            // Ids beyond ASCII order as Strings do: the decoded path keeps that rule in one place.
            var map = try ExplorerCellMap(decoding: stored)
            map.merge(incoming())
            return map.encoded()
        }
        /// The two entry lists walked in key order: `body` gets the stored entry's index, the
        /// incoming one's, or both.
        func walk(_ body: (Int?, Int?) throws(SketchDecodingError) -> Void) throws(SketchDecodingError) {
            var i = 0
            var j = 0
            while i < a.entries.count || j < b.count {
                let order =
                    i == a.entries.count
                    ? 1
                    : j == b.count
                        ? -1 : compare(a.entries[i].metric, a.entries[i].subject, b[j].metric, b[j].subject)
                if order < 0 {
                    try body(i, nil)
                    i += 1
                } else if order > 0 {
                    try body(nil, j)
                    j += 1
                } else {
                    try body(i, j)
                    i += 1
                    j += 1
                }
            }
        }
        // Counted first (the count leads the bytes), then written straight into the output: no
        // list of the merged entries, and one buffer for every merged cell.
        var count = 0
        try walk { _, _ in count += 1 }
        var out: [UInt8] = []
        out.reserveCapacity(a.bytes.count + 64 * b.count)
        writeHeader(count: count, into: &out)
        var previous: [UInt8] = []
        var cell: [UInt8] = []
        var scratch: [UInt8] = []
        try walk { i, j throws(SketchDecodingError) in
            switch (i, j) {
            case (let i?, nil):
                let entry = a.entries[i]
                write(
                    entry.metric, entry.subject, a.bytes[entry.cell], number: entry.number, after: previous, into: &out)
                previous = entry.metric
            case (nil, let j?):
                write(b[j].metric, b[j].subject, b[j].cell.encoded(), number: b[j].number, after: previous, into: &out)
                previous = b[j].metric
            case (let i?, let j?):
                let stored = a.bytes[a.entries[i].cell]
                cell.removeAll(keepingCapacity: true)
                if try !ExplorerCell.appendMerged(stored: stored, with: b[j].cell, into: &cell, scratch: &scratch) {
                    var decoded = try ExplorerCell(decoding: stored)
                    decoded.merge(b[j].cell)
                    cell = decoded.encoded()
                }
                write(b[j].metric, b[j].subject, cell, number: b[j].number, after: previous, into: &out)
                previous = b[j].metric
            case (nil, nil): break
            }
        }
        return compacted(out)
    }

    /// Reads bytes written by ``encoded()``, keeping only the metrics of `only` (every metric when
    /// `nil`; the others are skipped, their cells not decoded); throws ``SketchDecodingError`` on
    /// anything else.
    package init(decoding bytes: some Collection<UInt8>, only: Set<String>? = nil) throws(SketchDecodingError) {
        var cells: [Key: ExplorerCell] = [:]
        try Self.forEachCell(in: bytes, only: only) { key, cell throws(SketchDecodingError) in
            cells[key] = try ExplorerCell(decoding: cell)
        }
        self.cells = cells
    }

    /// Hands each entry of the map `bytes` hold (as ``encoded()`` wrote them) to `body`, in key
    /// order, with its cell's bytes undecoded (for ``ExplorerCell/merge(decoding:)``: a query merges
    /// the stored cells of thousands of rows without making a map of each); entries of metrics
    /// outside `only` (when given) are skipped, their ids compared as bytes and no string made of
    /// them. Throws ``SketchDecodingError`` when the map's own structure does not read.
    package static func forEachCell(
        in bytes: some Collection<UInt8>, only: Set<String>? = nil,
        _ body: (Key, ArraySlice<UInt8>) throws(SketchDecodingError) -> Void
    ) throws(SketchDecodingError) {
        let ids = only.map { Set($0.map { Array($0.utf8) }) }
        let all = try readable(Array(bytes))
        try forEachEntry(in: all) { metric, subject, cell, _ throws(SketchDecodingError) in
            if let ids, !ids.contains(metric) { return }
            try body(try key(metric, subject), all[cell])
        }
    }

    /// The entries of an encoded map, read once: ids and subjects as bytes, cells as ranges of
    /// `bytes`, undecoded.
    private struct RawEntries {
        struct Entry {
            var metric: [UInt8]
            var subject: [UInt8]
            var cell: Range<Int>
            var number: Int
        }

        let bytes: [UInt8]
        var entries: [Entry] = []
        /// Whether every id and subject is ASCII (then bytes order entries as ``Key`` does).
        var isASCII = true

        init(_ stored: [UInt8]) throws(SketchDecodingError) {
            let bytes = try ExplorerCellMap.readable(stored)
            self.bytes = bytes
            var entries: [Entry] = []
            // An entry keeps arrays of its own, never the walk's reused buffers (holding one made
            // the walk's next reuse copy it): a numbered id shares its catalog bytes, an empty
            // subject allocates nothing, and only the others are copied.
            isASCII = try ExplorerCellMap.forEachEntry(in: bytes) { metric, subject, cell, number in
                entries.append(
                    Entry(
                        metric: number > 0 ? ExplorerCellMap.numberedIDBytes[number - 1] : Self.copy(metric),
                        subject: subject.isEmpty ? [] : Self.copy(subject), cell: cell, number: number))
            }
            self.entries = entries
        }

        /// A copy of `bytes` in storage of its own.
        private static func copy(_ bytes: [UInt8]) -> [UInt8] {
            bytes.withUnsafeBufferPointer { [UInt8]($0) }
        }
    }

    /// Walks the entries of `bytes`, checking the version, the count, every length and the order,
    /// and hands each to `body`: its id and subject (buffers reused between entries), the range
    /// of its cell's bytes, undecoded, and the id's number (``numberedIDs``; 0: not there).
    /// Returns whether every id and subject is ASCII.
    @discardableResult
    private static func forEachEntry(
        in bytes: [UInt8],
        _ body: ([UInt8], [UInt8], Range<Int>, Int) throws(SketchDecodingError) -> Void
    ) throws(SketchDecodingError) -> Bool {
        var reader = ByteReader(bytes)
        let version = reader.byte()
        guard let version, (1...3).contains(version) else { throw .unsupportedVersion(version) }
        let numbered = version == 3
        let frontCoded = version >= 2
        let count = try reader.varint()
        guard count <= UInt64(Self.maxEntries) else { throw .invalid("more than \(Self.maxEntries) entries") }
        // The current and the previous entry's id and subject, as bytes (buffers reused).
        var metric: [UInt8] = []
        var subject: [UInt8] = []
        var previousMetric: [UInt8] = []
        var previousSubject: [UInt8] = []
        var ascii = true
        var previousASCII = true
        var allASCII = true
        for n in 0..<Int(count) {
            func bytes() throws(SketchDecodingError) -> ArraySlice<UInt8> {
                let length = try reader.varint()
                guard length <= 1_024 else { throw .invalid("a metric name longer than 1,024 bytes") }
                return try reader.take(Int(length))
            }
            swap(&metric, &previousMetric)
            swap(&subject, &previousSubject)
            previousASCII = ascii
            metric.removeAll(keepingCapacity: true)
            let number = numbered ? try reader.varint() : 0
            if number > 0 {
                guard number <= UInt64(numberedIDBytes.count) else { throw .invalid("an unknown metric number") }
                metric.append(contentsOf: numberedIDBytes[Int(number) - 1])
            } else if frontCoded {
                let shared = try reader.varint()
                guard shared <= UInt64(previousMetric.count) else {
                    throw .invalid("a prefix longer than the last name")
                }
                metric.append(contentsOf: previousMetric[..<Int(shared)])
            }
            if number == 0 { metric.append(contentsOf: try bytes()) }
            guard metric.count <= 1_024 else { throw .invalid("a metric name longer than 1,024 bytes") }
            subject.removeAll(keepingCapacity: true)
            subject.append(contentsOf: try bytes())
            ascii = isASCII(metric) && isASCII(subject)
            allASCII = allASCII && ascii
            if n > 0 {
                let ascending =
                    ascii && previousASCII
                    ? compare(previousMetric, previousSubject, metric, subject) < 0
                    : try key(previousMetric, previousSubject) < key(metric, subject)
                guard ascending else { throw .invalid("entries not ascending") }
            }
            let length = try reader.varint()
            guard length <= UInt64(ExplorerCell.maxEncodedSize) else { throw .invalid("a cell too long") }
            let start = reader.position
            _ = try reader.take(Int(length))
            // Versions 1 and 2 (rows written before numbers) name every id: looked up once here.
            let known = numbered ? Int(number) : numbers[metric] ?? 0
            try body(metric, subject, start..<reader.position, known)
        }
        guard reader.atEnd else { throw .invalid("trailing bytes") }
        return allASCII
    }

    static func writeHeader(count: Int, into out: inout [UInt8]) {
        out.append(Self.encodingVersion)
        ByteWriter.varint(UInt64(count), into: &out)
    }

    /// Appends one entry, its id by `number` (> 0), or front-coded against `previous` (the last
    /// entry's id).
    private static func write(
        _ metric: [UInt8], _ subject: [UInt8], _ cell: some Collection<UInt8>, number: Int, after previous: [UInt8],
        into out: inout [UInt8]
    ) {
        writeKey(metric, subject, number: number, after: previous, into: &out)
        ByteWriter.varint(UInt64(cell.count), into: &out)
        out.append(contentsOf: cell)
    }

    /// Appends one entry's id and subject (``write(_:_:_:number:after:into:)`` without its cell).
    static func writeKey(
        _ metric: [UInt8], _ subject: [UInt8], number: Int, after previous: [UInt8], into out: inout [UInt8]
    ) {
        if number > 0 {
            ByteWriter.varint(UInt64(number), into: &out)
        } else {
            out.append(0)
            var shared = 0
            while shared < metric.count, shared < previous.count, metric[shared] == previous[shared] { shared += 1 }
            ByteWriter.varint(UInt64(shared), into: &out)
            ByteWriter.varint(UInt64(metric.count - shared), into: &out)
            out.append(contentsOf: metric[shared...])
        }
        ByteWriter.varint(UInt64(subject.count), into: &out)
        out.append(contentsOf: subject)
    }

    private static func key(_ metric: [UInt8], _ subject: [UInt8]) throws(SketchDecodingError) -> Key {
        guard let name = string(metric), let series = string(subject) else {
            throw .invalid("a metric name that is not UTF-8")
        }
        return Key(metric: name, subject: series)
    }

    /// The string of UTF-8 `bytes`; `nil` when they are not UTF-8. ASCII (every catalog id) is
    /// made without the generic validation, which cost a query 3 % of its time in type metadata.
    private static func string(_ bytes: [UInt8]) -> String? {
        isASCII(bytes) ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    static func isASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 < 0x80 } }

    /// `(x, y)` against `(a, b)` as bytes: negative, zero or positive. For ASCII ids this is
    /// ``Key``'s order.
    static func compare(_ x: [UInt8], _ y: [UInt8], _ a: [UInt8], _ b: [UInt8]) -> Int {
        let first = compare(x, a)
        return first != 0 ? first : compare(y, b)
    }

    private static func compare(_ x: [UInt8], _ a: [UInt8]) -> Int {
        x.withUnsafeBufferPointer { x in
            a.withUnsafeBufferPointer { a in
                let shared = min(x.count, a.count)
                var n = 0
                while n < shared {
                    if x[n] != a[n] { return Int(x[n]) - Int(a[n]) }
                    n += 1
                }
                return x.count - a.count
            }
        }
    }
}
