/// The explorer's cells of one store row: every metric and series of one app, day, version, OS,
/// device and app state, packed in one value (PostgreSQL's `explorer_cells.cells`). One row per
/// device-day cell instead of one per metric: a fold batch reads and writes ~45 times fewer rows.
///
/// Binary form, version 1 (varints unsigned LEB128):
///
/// ```
/// u8      version (1)
/// varint  n                        entries (≤ 4,096), ascending by (metric, subject), distinct
/// n × (varint m, m bytes metric id (UTF-8), varint s, s bytes subject, varint c, c bytes ExplorerCell)
/// ```
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

    package static let encodingVersion: UInt8 = 1
    /// The most entries a map holds (the catalog has 66 metrics; signposts add series).
    package static let maxEntries = 4_096

    package var cells: [Key: ExplorerCell] = [:]

    package init(_ cells: [Key: ExplorerCell] = [:]) {
        self.cells = cells
    }

    /// Adds `other`'s cells to these.
    package mutating func merge(_ other: ExplorerCellMap) {
        for (key, cell) in other.cells { cells[key, default: ExplorerCell()].merge(cell) }
    }

    /// The version-1 bytes (entries in key order: a map always encodes to the same bytes).
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.encodingVersion]
        ByteWriter.varint(UInt64(cells.count), into: &out)
        for key in cells.keys.sorted() {
            let cell = cells[key]?.encoded() ?? []
            for text in [Array(key.metric.utf8), Array(key.subject.utf8)] {
                ByteWriter.varint(UInt64(text.count), into: &out)
                out.append(contentsOf: text)
            }
            ByteWriter.varint(UInt64(cell.count), into: &out)
            out.append(contentsOf: cell)
        }
        return out
    }

    /// Reads bytes written by ``encoded()``, keeping only the metrics `wanted` accepts (the
    /// others are skipped, their cells not decoded); throws ``SketchDecodingError`` on anything else.
    package init(
        decoding bytes: some Collection<UInt8>, wanted: (String) -> Bool = { _ in true }
    ) throws(SketchDecodingError) {
        var reader = ByteReader(Array(bytes))
        let version = reader.byte()
        guard version == Self.encodingVersion else { throw .unsupportedVersion(version) }
        let count = try reader.varint()
        guard count <= UInt64(Self.maxEntries) else { throw .invalid("more than \(Self.maxEntries) entries") }
        var previous: Key?
        for _ in 0..<Int(count) {
            func text() throws(SketchDecodingError) -> String {
                let length = try reader.varint()
                guard length <= 1_024 else { throw .invalid("a metric name longer than 1,024 bytes") }
                guard let text = String(validating: try reader.take(Int(length)), as: UTF8.self) else {
                    throw .invalid("a metric name that is not UTF-8")
                }
                return text
            }
            let key = Key(metric: try text(), subject: try text())
            if let previous, !(previous < key) { throw .invalid("entries not ascending") }
            previous = key
            let length = try reader.varint()
            guard length <= UInt64(ExplorerCell.maxEncodedSize) else { throw .invalid("a cell too long") }
            let cellBytes = try reader.take(Int(length))
            if wanted(key.metric) { cells[key] = try ExplorerCell(decoding: cellBytes) }
        }
        guard reader.atEnd else { throw .invalid("trailing bytes") }
    }
}
