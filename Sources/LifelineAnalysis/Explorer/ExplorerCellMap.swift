/// The explorer's cells of one store row: every metric and series of one app, day, version, OS,
/// device and app state, packed in one value (PostgreSQL's `explorer_cells.cells`). One row per
/// device-day cell instead of one per metric: a fold batch reads and writes ~45 times fewer rows.
///
/// Binary form, version 2 (varints unsigned LEB128), the one written:
///
/// ```
/// u8      version (2)
/// varint  n                        entries (≤ 4,096), ascending by (metric, subject), distinct
/// n × (varint p, varint m, m bytes, varint s, s bytes subject, varint c, c bytes ExplorerCell)
/// ```
///
/// Each metric id is front-coded: the first `p` bytes of the previous entry's id, then `m` bytes
/// of its own (entries are sorted, and ids share long prefixes such as
/// `termination.background.`): ~0.6 KB of names per device-day cell instead of ~2.8 KB. Version 1
/// (written before) has no `p` and whole ids; both are read.
///
/// A reader that wants some metrics skips the others' cells by their length without decoding them.
/// Decoding checks every length and every cell, so arbitrary bytes throw and never trap.
package struct ExplorerCellMap: Sendable, Equatable {
    /// A metric and its series.
    package struct Key: Sendable, Hashable, Comparable {
        package var metric: String
        package var subject: String

        package init(metric: String, subject: String) {
            self.metric = metric
            self.subject = subject
        }

        package static func < (a: Key, b: Key) -> Bool { (a.metric, a.subject) < (b.metric, b.subject) }
    }

    package static let encodingVersion: UInt8 = 2
    /// The most entries a map holds (the catalog has 66 metrics; signposts add series).
    package static let maxEntries = 4_096

    package var cells: [Key: ExplorerCell] = [:]

    package init(_ cells: [Key: ExplorerCell] = [:]) {
        self.cells = cells
    }

    /// Adds `other`'s cells to these.
    package mutating func merge(_ other: ExplorerCellMap) {
        for (key, cell) in other.cells {
            if let index = cells.index(forKey: key) {
                cells.values[index].merge(cell)
            } else {
                cells[key] = cell
            }
        }
    }

    /// The version-2 bytes (entries in key order: a map always encodes to the same bytes).
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.encodingVersion]
        ByteWriter.varint(UInt64(cells.count), into: &out)
        // In Key's order, compared as bytes where the ids are ASCII (no String comparison); the
        // indexes are sorted, not the entries.
        let keys = Array(cells.keys)
        let values = Array(cells.values)  // in the keys' order
        let metrics = keys.map { Array($0.metric.utf8) }
        let subjects = keys.map { Array($0.subject.utf8) }
        let order = keys.indices.sorted { a, b in
            Self.bytewisePrecedes(metrics[a], subjects[a], metrics[b], subjects[b]) ?? (keys[a] < keys[b])
        }
        var previous: [UInt8] = []
        for index in order {
            let metric = metrics[index]
            var shared = 0
            while shared < metric.count, shared < previous.count, metric[shared] == previous[shared] { shared += 1 }
            let encodedCell = values[index].encoded()
            ByteWriter.varint(UInt64(shared), into: &out)
            ByteWriter.varint(UInt64(metric.count - shared), into: &out)
            out.append(contentsOf: metric[shared...])
            ByteWriter.varint(UInt64(subjects[index].count), into: &out)
            out.append(contentsOf: subjects[index])
            ByteWriter.varint(UInt64(encodedCell.count), into: &out)
            out.append(contentsOf: encodedCell)
            previous = metric
        }
        return out
    }

    /// Reads bytes written by ``encoded()``, keeping only the metrics of `only` (every metric when
    /// `nil`; the others are skipped, their cells not decoded); throws ``SketchDecodingError`` on
    /// anything else. A query reads thousands of maps for a few metrics: the others' ids are
    /// compared as bytes and no string is made of them.
    package init(decoding bytes: some Collection<UInt8>, only: Set<String>? = nil) throws(SketchDecodingError) {
        let ids = only.map { Set($0.map { Array($0.utf8) }) }
        var reader = ByteReader(Array(bytes))
        let version = reader.byte()
        guard version == 1 || version == Self.encodingVersion else { throw .unsupportedVersion(version) }
        let frontCoded = version == 2
        let count = try reader.varint()
        guard count <= UInt64(Self.maxEntries) else { throw .invalid("more than \(Self.maxEntries) entries") }
        // The current and the previous entry's id and subject, as bytes (buffers reused).
        var metric: [UInt8] = []
        var subject: [UInt8] = []
        var previousMetric: [UInt8] = []
        var previousSubject: [UInt8] = []
        for n in 0..<Int(count) {
            func bytes() throws(SketchDecodingError) -> ArraySlice<UInt8> {
                let length = try reader.varint()
                guard length <= 1_024 else { throw .invalid("a metric name longer than 1,024 bytes") }
                return try reader.take(Int(length))
            }
            swap(&metric, &previousMetric)
            swap(&subject, &previousSubject)
            metric.removeAll(keepingCapacity: true)
            if frontCoded {
                let shared = try reader.varint()
                guard shared <= UInt64(previousMetric.count) else {
                    throw .invalid("a prefix longer than the last name")
                }
                metric.append(contentsOf: previousMetric[..<Int(shared)])
            }
            metric.append(contentsOf: try bytes())
            guard metric.count <= 1_024 else { throw .invalid("a metric name longer than 1,024 bytes") }
            subject.removeAll(keepingCapacity: true)
            subject.append(contentsOf: try bytes())
            if n > 0, !(try Self.ascending(previousMetric, previousSubject, metric, subject)) {
                throw .invalid("entries not ascending")
            }
            let length = try reader.varint()
            guard length <= UInt64(ExplorerCell.maxEncodedSize) else { throw .invalid("a cell too long") }
            let cellBytes = try reader.take(Int(length))
            if let ids, !ids.contains(metric) { continue }
            cells[try Self.key(metric, subject)] = try ExplorerCell(decoding: cellBytes)
        }
        guard reader.atEnd else { throw .invalid("trailing bytes") }
    }

    private static func key(_ metric: [UInt8], _ subject: [UInt8]) throws(SketchDecodingError) -> Key {
        guard let name = String(validating: metric, as: UTF8.self),
            let series = String(validating: subject, as: UTF8.self)
        else { throw .invalid("a metric name that is not UTF-8") }
        return Key(metric: name, subject: series)
    }

    /// Whether `(a, b)` comes strictly after `(x, y)` in ``Key``'s order: bytewise for ASCII (the
    /// same order, without making strings), else as ``Key`` compares.
    private static func ascending(
        _ x: [UInt8], _ y: [UInt8], _ a: [UInt8], _ b: [UInt8]
    ) throws(SketchDecodingError) -> Bool {
        if let bytewise = bytewisePrecedes(x, y, a, b) { return bytewise }
        return try key(x, y) < key(a, b)
    }

    /// Whether `(x, y)` comes before `(a, b)` in ``Key``'s order, compared as bytes when all four
    /// are ASCII (the same order); `nil` otherwise (the caller compares the strings).
    private static func bytewisePrecedes(_ x: [UInt8], _ y: [UInt8], _ a: [UInt8], _ b: [UInt8]) -> Bool? {
        func ascii(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 < 0x80 } }
        guard ascii(x), ascii(y), ascii(a), ascii(b) else { return nil }
        return x == a ? y.lexicographicallyPrecedes(b) : x.lexicographicallyPrecedes(a)
    }
}
