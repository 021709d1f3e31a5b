/// Why bytes could not be read back as a ``QuantileSketch`` or ``Moments``.
package enum SketchDecodingError: Error, Sendable, Equatable {
    /// Empty input, or a format version this build does not know.
    case unsupportedVersion(UInt8?)
    /// The bytes end inside a field.
    case truncated
    /// A varint longer than 10 bytes or above `UInt64.max`.
    case badVarint
    /// A field out of its range (index, bucket count, span, non-finite or negative number,
    /// counts that do not add up, a zero bucket count).
    case invalid(String)
    /// Bytes after the last field.
    case trailingBytes
}

/// The binary form of a ``QuantileSketch``, for a BLOB (SQLite) or `bytea` (PostgreSQL) column.
///
/// Version 1, all integers unsigned LEB128 varints unless said otherwise:
///
/// ```
/// u8      version (1)
/// varint  zeroCount
/// f64 LE  sum, min, max          (IEEE 754 bits, 8 bytes each; all +0 when empty)
/// varint  k                      non-empty buckets (0…2048)
/// zigzag  first index            (only when k > 0)
/// varint  count of that bucket
/// k − 1 × (varint gap ≥ 1 to the next non-empty index, varint count)
/// ```
///
/// `count` is not stored: it is `zeroCount` plus the bucket counts. α and the bucket bound are
/// those of version 1; a change of either is a new version. The same sketch always encodes to the
/// same bytes (only non-empty buckets, fixed field order), so equal states compare equal as
/// blobs. Decoding checks every field (version, varint length, indexes within ±40,000, a span of
/// at most 2,048 buckets, no zero bucket count, counts without overflow, sum/min/max finite, non-
/// negative and ordered, no trailing bytes) and allocates at most one array of 2,048 counts, so
/// arbitrary bytes throw ``SketchDecodingError`` and never trap.
extension QuantileSketch {
    /// The current encoding version.
    package static let encodingVersion: UInt8 = 1

    /// The version-1 bytes of this sketch.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        let empty = count == 0
        var present = 0
        forEachBucket { _, _ in present += 1 }
        out.reserveCapacity(32 + present * 3)
        Self.writeSummary(
            zeroCount: zeroCount, sum: empty ? 0 : sum, min: empty ? 0 : min ?? 0, max: empty ? 0 : max ?? 0,
            present: present, into: &out)
        var previous: Int?
        forEachBucket { index, c in Self.writeBucket(index, c, after: &previous, into: &out) }
        return out
    }

    /// Appends the version and the fields before the buckets (`present`: how many follow).
    static func writeSummary(
        zeroCount: UInt64, sum: Double, min: Double, max: Double, present: Int, into out: inout [UInt8]
    ) {
        out.append(encodingVersion)
        ByteWriter.varint(zeroCount, into: &out)
        ByteWriter.double(sum, into: &out)
        ByteWriter.double(min, into: &out)
        ByteWriter.double(max, into: &out)
        ByteWriter.varint(UInt64(present), into: &out)
    }

    /// Appends one non-empty bucket: its index (zigzag) when it is the first, else the gap from
    /// `previous`, then its count.
    static func writeBucket(_ index: Int, _ count: UInt64, after previous: inout Int?, into out: inout [UInt8]) {
        if let previous {
            ByteWriter.varint(UInt64(index - previous), into: &out)
        } else {
            ByteWriter.varint(ByteWriter.zigzag(Int64(index)), into: &out)
        }
        ByteWriter.varint(count, into: &out)
        previous = index
    }

    /// Reads bytes written by ``encoded()``; throws ``SketchDecodingError`` on anything else.
    package init(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        self.init(try Sparse(decoding: bytes))
    }

    /// Adds the sketch `bytes` hold (as ``encoded()`` wrote them) to this one, equal to decoding
    /// it and ``merge(_:)``, without the dense copy of its buckets; throws (changing nothing) on
    /// anything ``init(decoding:)`` refuses. A query merges thousands of stored sketches.
    package mutating func merge(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        merge(try Sparse(decoding: bytes))
    }

    /// A decoded, checked sketch whose buckets are still the encoding's non-empty ones.
    struct Sparse {
        var zeroCount: UInt64
        var count: UInt64
        var sum: Double
        var min: Double
        var max: Double
        /// Non-empty buckets, ascending by index, spanning at most ``QuantileSketch/maxBuckets``.
        var buckets: [(index: Int, count: UInt64)]

        init(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
            guard bytes.count <= QuantileSketch.maxEncodedSize else { throw .invalid("longer than any sketch") }
            var reader = ByteReader(bytes)
            let version = reader.byte()
            guard version == QuantileSketch.encodingVersion else { throw .unsupportedVersion(version) }
            zeroCount = try reader.varint()
            sum = try reader.double()
            min = try reader.double()
            max = try reader.double()
            guard sum.isFinite, min.isFinite, max.isFinite, sum >= 0, min >= 0, max >= min
            else { throw .invalid("sum, min or max not finite, negative or out of order") }
            let k = try reader.varint()
            guard k <= UInt64(QuantileSketch.maxBuckets) else {
                throw .invalid("more than \(QuantileSketch.maxBuckets) buckets")
            }
            var total = zeroCount
            buckets = []
            if k > 0 {
                buckets.reserveCapacity(Int(k))
                let first = ByteWriter.unzigzag(try reader.varint())
                guard first >= -Int64(QuantileSketch.indexLimit), first <= Int64(QuantileSketch.indexLimit) else {
                    throw .invalid("bucket index out of range")
                }
                var index = Int(first)
                for n in 0..<Int(k) {
                    if n > 0 {
                        let gap = try reader.varint()
                        guard gap >= 1, gap < UInt64(QuantileSketch.maxBuckets),
                            index - Int(first) + Int(gap) < QuantileSketch.maxBuckets
                        else { throw .invalid("bucket span above \(QuantileSketch.maxBuckets)") }
                        index += Int(gap)
                    }
                    let c = try reader.varint()
                    guard c > 0 else { throw .invalid("empty bucket") }
                    let (t, overflow) = total.addingReportingOverflow(c)
                    guard !overflow else { throw .invalid("counts above UInt64.max") }
                    total = t
                    buckets.append((index, c))
                }
                guard index <= QuantileSketch.indexLimit else { throw .invalid("bucket index out of range") }
            }
            guard reader.atEnd else { throw .trailingBytes }
            if total == 0 {
                guard sum == 0, min == 0, max == 0 else { throw .invalid("an empty sketch with values") }
            } else if zeroCount > 0 {
                guard min == 0 else { throw .invalid("zeros counted but min above 0") }
            }
            count = total
        }
    }

    init(_ sparse: Sparse) {
        self.init()
        merge(sparse)
    }

    /// An upper bound of the encoded size: header + 2,048 buckets of two 10-byte varints.
    package static let maxEncodedSize: Int = 1 + 10 + 24 + 10 + 10 + maxBuckets * 20
}

/// Little-endian writers shared by the encodings of this folder.
enum ByteWriter {
    static func varint(_ value: UInt64, into out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(truncatingIfNeeded: v))
    }

    static func double(_ value: Double, into out: inout [UInt8]) {
        let bits = value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) {
            out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }

    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}

/// A bounds-checked reader over bytes: every read throws instead of reading past the end. It
/// reads the slice it is given in place (a cell inside a map, a sketch inside a cell): decoding a
/// query's thousands of maps copied every nested part once per level.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    /// `bytes` as they are when they already are an array or a slice of one, else copied once.
    init(_ bytes: some Collection<UInt8>) {
        if let slice = bytes as? ArraySlice<UInt8> {
            self.init(slice)
        } else if let array = bytes as? [UInt8] {
            self.init(array[...])
        } else {
            self.init(Array(bytes)[...])
        }
    }

    var atEnd: Bool { position == bytes.endIndex }

    mutating func byte() -> UInt8? {
        guard position < bytes.endIndex else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws(SketchDecodingError) -> UInt64 {
        var result: UInt64 = 0
        for n in 0..<10 {
            guard let b = byte() else { throw .truncated }
            if n == 9, b > 1 { throw .badVarint }
            result |= UInt64(b & 0x7F) << UInt64(7 * n)
            if b & 0x80 == 0 { return result }
        }
        throw .badVarint
    }

    /// The next `count` bytes.
    mutating func take(_ count: Int) throws(SketchDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.endIndex - position >= count else { throw .truncated }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func double() throws(SketchDecodingError) -> Double {
        guard bytes.endIndex - position >= 8 else { throw .truncated }
        var bits: UInt64 = 0
        for n in 0..<8 {
            bits |= UInt64(bytes[position + n]) << UInt64(8 * n)
        }
        position += 8
        return Double(bitPattern: bits)
    }
}

extension QuantileSketch {
    /// Writes the version-1 bytes of `stored` merged with `incoming`: what decoding `stored`,
    /// ``merge(_:)`` of `incoming` and ``encoded()`` write, walking the stored buckets and
    /// `incoming`'s counts side by side instead of making the merged dense array. Returns `false`,
    /// writing nothing, when either sketch is empty or the merge would collapse buckets (past
    /// ``maxBuckets``): the caller then takes that path.
    static func encodeMerged(_ stored: Sparse, _ incoming: QuantileSketch, into out: inout [UInt8]) -> Bool {
        guard stored.count > 0, incoming.count > 0 else { return false }
        if let low = stored.buckets.first?.index, let high = stored.buckets.last?.index,
            let span = incoming.bucketSpan
        {
            guard Swift.max(high, span.high) - Swift.min(low, span.low) + 1 <= maxBuckets else { return false }
        }
        /// Hands each non-empty bucket of the merge to `body`, in index order.
        func walk(_ body: (Int, UInt64) -> Void) {
            var i = 0
            incoming.forEachBucket { index, c in
                while i < stored.buckets.count, stored.buckets[i].index < index {
                    body(stored.buckets[i].index, stored.buckets[i].count)
                    i += 1
                }
                if i < stored.buckets.count, stored.buckets[i].index == index {
                    body(index, stored.buckets[i].count.addingSaturating(c))
                    i += 1
                } else {
                    body(index, c)
                }
            }
            while i < stored.buckets.count {
                body(stored.buckets[i].index, stored.buckets[i].count)
                i += 1
            }
        }
        var present = 0
        walk { _, _ in present += 1 }
        writeSummary(
            zeroCount: stored.zeroCount.addingSaturating(incoming.zeroCount), sum: finiteSum(stored.sum, incoming.sum),
            min: Swift.min(stored.min, incoming.minimum), max: Swift.max(stored.max, incoming.maximum),
            present: present,
            into: &out)
        var previous: Int?
        walk { index, c in writeBucket(index, c, after: &previous, into: &out) }
        return true
    }
}

extension UInt64 {
    /// `self + other`, `UInt64.max` on overflow: counts folded from stored rows never trap.
    @inline(__always)
    package func addingSaturating(_ other: UInt64) -> UInt64 {
        let (result, overflow) = addingReportingOverflow(other)
        return overflow ? .max : result
    }
}
