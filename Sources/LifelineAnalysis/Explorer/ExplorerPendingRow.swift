/// A packed row's observations not merged yet, as bytes: what a fold adds to a row it will merge
/// into its stored cells later (the SQLite explorer's held rows: fine ones until their seal,
/// version-level ones until their part is sealed). ``builder(category:)`` replays them, in
/// order, into the ``ExplorerCellMapBuilder`` adding them directly would have made.
///
/// Held as builders, a row's cells (a sketch, moments and histogram buckets per metric) took ~6×
/// their encoded size, and the reference load's ~7,000 version rows (16,000 for iOS 27 reports)
/// went past the server's memory target; a device-day's observation here takes its numbers' few
/// bytes (BENCHMARKS.md, "The explorer's rows pending as bytes").
///
/// An entry: a varint `o`: `o ≥ 1` is catalog metric `o − 1` without a series (``add(_:ordinal:)``);
/// `0` is a keyed entry (``add(_:at:ordinal:)``): metric and subject (each a varint length and
/// UTF-8), then a varint ordinal + 1 (0: none). Then one byte, 0 for a refused sample (the cell is
/// made empty) or 1 followed by the sample (``ExplorerCell/Prepared/append(to:)``).
package struct ExplorerPendingRow: Sendable {
    private var bytes: [UInt8] = []

    package init() {}

    /// The bytes held.
    package var byteCount: Int { bytes.count }

    /// Whether nothing was added.
    package var isEmpty: Bool { bytes.isEmpty }

    /// Appends `other`'s observations after this row's.
    package mutating func append(_ other: ExplorerPendingRow) {
        bytes.append(contentsOf: other.bytes)
    }

    /// Drops every observation, keeping the memory (a row reused as scratch).
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// As ``ExplorerCellMapBuilder/add(_:ordinal:)``.
    package mutating func add(_ sample: ExplorerCell.Prepared?, ordinal: Int) {
        ByteWriter.varint(UInt64(ordinal) + 1, into: &bytes)
        append(sample)
    }

    /// As ``ExplorerCellMapBuilder/add(_:at:ordinal:)``.
    package mutating func add(_ sample: ExplorerCell.Prepared?, at entry: ExplorerCellMap.Key, ordinal: Int?) {
        bytes.append(0)
        for text in [entry.metric, entry.subject] {
            ByteWriter.varint(UInt64(text.utf8.count), into: &bytes)
            bytes.append(contentsOf: text.utf8)
        }
        ByteWriter.varint(ordinal.map { UInt64($0) + 1 } ?? 0, into: &bytes)
        append(sample)
    }

    private mutating func append(_ sample: ExplorerCell.Prepared?) {
        guard let sample else { return bytes.append(0) }
        bytes.append(1)
        sample.append(to: &bytes)
    }

    /// The observations replayed, in the order they came, into a builder of `category`'s row.
    /// Throws only on bytes this type did not write.
    package func builder(category: ExplorerCategory?) throws(SketchDecodingError) -> ExplorerCellMapBuilder {
        var builder = ExplorerCellMapBuilder(category: category)
        var reader = ByteReader(bytes)
        while !reader.atEnd {
            let tag = try reader.varint()
            if tag > 0 {
                guard tag <= UInt64(ExplorerCatalog.metrics.count) else { throw .invalid("metric ordinal") }
                builder.add(try Self.sample(&reader), ordinal: Int(tag - 1))
                continue
            }
            let metric = try Self.text(&reader)
            let subject = try Self.text(&reader)
            let ordinal = try reader.varint()
            guard ordinal <= UInt64(ExplorerCatalog.metrics.count) else { throw .invalid("metric ordinal") }
            builder.add(
                try Self.sample(&reader), at: ExplorerCellMap.Key(metric: metric, subject: subject),
                ordinal: ordinal == 0 ? nil : Int(ordinal - 1))
        }
        return builder
    }

    /// The bytes ``builder(category:)`` then ``ExplorerCellMapBuilder/encoded()`` make, without
    /// either, when every observation is one sample of a distinct catalog metric of `category`,
    /// without a series, whose cell alone encodes as one device-day (a fine row of one payload,
    /// most of them on a load of many distinct devices): each cell's bytes are then written from
    /// its sample's numbers, no sketch, moments or cell made (the replay and the encoding were
    /// half of the prepare's time on the iOS 27 load, BENCHMARKS.md). `nil` when the row is not
    /// such: the caller takes the builder.
    package func encodedAlone(category: ExplorerCategory?) throws(SketchDecodingError) -> [UInt8]? {
        guard ExplorerCatalog.idsAreASCII, let category, let (range, order) = ExplorerCatalog.byteOrders[category],
            let numberOrder = ExplorerCatalog.numberOrders[category]
        else {
            return nil
        }
        var slots = [ExplorerCell.Prepared?](repeating: nil, count: range.count)
        var count = 0
        var reader = ByteReader(bytes)
        while !reader.atEnd {
            let tag = try reader.varint()
            guard tag > UInt64(range.lowerBound), tag <= UInt64(range.upperBound) else { return nil }
            let slot = Int(tag) - 1 - range.lowerBound
            if case .some = slots[slot] { return nil }  // a second sample: a cell of two device-days
            guard let sample = try Self.sample(&reader), sample.encodesAlone else { return nil }
            slots[slot] = sample
            count += 1
        }
        // Each sample's bytes are nearly its cell's: the entry adds its id, its length and a version.
        return ExplorerCellMap.encodeAlone(
            slots, first: range.lowerBound, byteOrder: order, numberOrder: numberOrder,
            count: count, capacity: bytes.count + 4 * count + 4)
    }

    private static func text(_ reader: inout ByteReader) throws(SketchDecodingError) -> String {
        let count = try reader.varint()
        guard count <= UInt64(Int32.max) else { throw .truncated }
        return String(decoding: try reader.take(Int(count)), as: UTF8.self)
    }

    private static func sample(_ reader: inout ByteReader) throws(SketchDecodingError) -> ExplorerCell.Prepared? {
        switch reader.byte() {
        case 0: return nil
        case 1: return try ExplorerCell.Prepared.read(&reader)
        default: throw .invalid("sample tag")
        }
    }
}
