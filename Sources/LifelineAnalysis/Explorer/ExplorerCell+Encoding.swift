/// The binary form of an ``ExplorerCell``, for a BLOB (SQLite) or `bytea` (PostgreSQL) column.
///
/// Version 1, varints unsigned LEB128:
///
/// ```
/// u8      version (1)
/// varint  L, then L bytes    the sketch (QuantileSketch's own version-1 encoding)
/// 6 × f64 LE                 ratio moments: n, x̄, ȳ, Cxx, Cyy, Cxy
/// varint  k                  histogram buckets (0…128)
/// k × (number start, number end, varint count ≥ 1), ascending by (start, end), distinct
/// ```
///
/// A number is a varint `t`: even, the integer `t / 2` (< 2^53; whole milliseconds cost 2–3
/// bytes); `1`, followed by the 8 bytes of an IEEE double; anything else is refused. A cell always
/// encodes to the same bytes. Decoding checks every field (the sketch as ``QuantileSketch`` does;
/// finite moments with non-negative `n`, `Cxx`, `Cyy`; as many moment pairs as sketch entries;
/// buckets finite, non-negative, `start ≤ end`, strictly ascending, counts in 1…`Int64.max`; no
/// trailing bytes; at most ``maxEncodedSize`` bytes), so arbitrary bytes throw
/// ``SketchDecodingError`` and never trap.
extension ExplorerCell {
    /// The current encoding version.
    package static let encodingVersion: UInt8 = 1

    /// An upper bound of the encoded size.
    package static let maxEncodedSize: Int = 1 + 10 + QuantileSketch.maxEncodedSize + 48 + 10 + maxBuckets * 38

    /// The version-1 bytes of this cell.
    package func encoded() -> [UInt8] {
        let sketchBytes = sketch.encoded()
        var out: [UInt8] = [Self.encodingVersion]
        out.reserveCapacity(sketchBytes.count + 64 + buckets.count * 8)
        ByteWriter.varint(UInt64(sketchBytes.count), into: &out)
        out.append(contentsOf: sketchBytes)
        for field in moments.fields { ByteWriter.double(field, into: &out) }
        ByteWriter.varint(UInt64(buckets.count), into: &out)
        for bucket in buckets {
            Self.writeNumber(bucket.start, into: &out)
            Self.writeNumber(bucket.end, into: &out)
            ByteWriter.varint(UInt64(bucket.count), into: &out)
        }
        return out
    }

    /// Reads bytes written by ``encoded()``; throws ``SketchDecodingError`` on anything else.
    package init(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        guard bytes.count <= Self.maxEncodedSize else { throw .invalid("longer than any explorer cell") }
        var reader = ByteReader(Array(bytes))
        let version = reader.byte()
        guard version == Self.encodingVersion else { throw .unsupportedVersion(version) }
        let length = try reader.varint()
        guard length <= UInt64(QuantileSketch.maxEncodedSize) else { throw .invalid("sketch longer than any sketch") }
        var sketchBytes: [UInt8] = []
        sketchBytes.reserveCapacity(Int(length))
        for _ in 0..<Int(length) {
            guard let byte = reader.byte() else { throw .truncated }
            sketchBytes.append(byte)
        }
        let sketch = try QuantileSketch(decoding: sketchBytes)
        var fields: [Double] = []
        for _ in 0..<6 { fields.append(try reader.double()) }
        let moments = try RatioMoments(checked: fields)
        if sketch.count < 1 << 53 {
            guard moments.count == Double(sketch.count) else { throw .invalid("moments and sketch count differ") }
        }
        let k = try reader.varint()
        guard k <= UInt64(Self.maxBuckets) else { throw .invalid("more than \(Self.maxBuckets) buckets") }
        var buckets: [BucketDistribution.Bucket] = []
        buckets.reserveCapacity(Int(k))
        for _ in 0..<Int(k) {
            let start = try Self.readNumber(&reader)
            let end = try Self.readNumber(&reader)
            let count = try reader.varint()
            guard start.isFinite, end.isFinite, start >= 0, end >= start else { throw .invalid("bucket bounds") }
            guard count >= 1, count <= UInt64(Int64.max) else { throw .invalid("bucket count") }
            if let last = buckets.last {
                guard (last.start, last.end) < (start, end) else { throw .invalid("buckets not ascending") }
            }
            buckets.append(BucketDistribution.Bucket(start: start, end: end, count: Int64(count)))
        }
        guard reader.atEnd else { throw .trailingBytes }
        if !buckets.isEmpty {
            guard !sketch.isEmpty else { throw .invalid("histogram buckets without device-days") }
        }
        self.init(sketch: sketch, moments: moments, checkedBuckets: buckets)
    }

    private static let exactLimit: Double = 9_007_199_254_740_992  // 2^53

    private static func writeNumber(_ value: Double, into out: inout [UInt8]) {
        if value >= 0, value < exactLimit, value.rounded() == value {
            ByteWriter.varint(UInt64(value) << 1, into: &out)
        } else {
            ByteWriter.varint(1, into: &out)
            ByteWriter.double(value, into: &out)
        }
    }

    private static func readNumber(_ reader: inout ByteReader) throws(SketchDecodingError) -> Double {
        let tag = try reader.varint()
        if tag & 1 == 0 {
            let value = tag >> 1
            guard value < 1 << 53 else { throw .invalid("integer bound above 2^53") }
            return Double(value)
        }
        guard tag == 1 else { throw .invalid("unknown number tag") }
        return try reader.double()
    }
}
