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
/// Version 2, a cell of exactly one device-day (a fine cell of one payload: most of them), whose
/// sketch and moments are those ``ExplorerCell/add(_:)`` makes of the pair `(x, y)`:
///
/// ```
/// u8      version (2)
/// number  x, number y        the device-day's (x, y): (1, value), (hours, count), (samples, total)
/// varint  k, then k buckets  as in version 1
/// ```
///
/// It decodes to the sketch of `y / x` and the moments of `(x, y)`; the encoder uses it only when
/// that rebuilds the cell exactly, so both versions decode to equal cells. ~10 bytes instead of
/// ~80 for a scalar metric. Without histogram buckets (most cells: scalars and rates) the encoder
/// writes it shorter: version 3, `number x, number y`; version 4, `number x` when `y` is 0 (a
/// device-day without that exit or hang: a third of an iOS 27 report's cells). Version 2 with no
/// buckets, written before, is still read.
///
/// A number is a varint `t`: even, the integer `t / 2` (< 2^53; whole milliseconds cost 2–3
/// bytes); `4m + 3` (m ≥ 1), the hours `m / 3,600` of whole seconds; `4m + 1` (m ≥ 1), the hours
/// `m / 3,600,000` of whole milliseconds (each only when that division gives back the very
/// double: a device-day's hours, the `x` of every exit and hang rate, cost 2–4 bytes instead of
/// 9); `1`, followed by the 8 bytes of an IEEE double; anything else is refused. A cell always
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

    /// The compact forms' versions (one device-day): with buckets, without, without and `y = 0`.
    static let singleDeviceDayVersions: (buckets: UInt8, bucketless: UInt8, zero: UInt8) = (2, 3, 4)

    /// The bytes of this cell: versions 2–4 when it is one device-day those forms rebuild exactly,
    /// else version 1.
    package func encoded() -> [UInt8] {
        if sketch.count == 1, moments.count == 1, isSingleDeviceDay {
            var out: [UInt8] = []
            out.reserveCapacity(24 + buckets.count * 8)
            Self.appendDeviceDay(x: moments.meanX, y: moments.meanY, buckets: buckets, to: &out)
            return out
        }
        var out: [UInt8] = []
        Self.appendVersion1(sketch: sketch.encoded(), moments: moments, buckets: buckets, into: &out)
        return out
    }

    /// Appends the bytes ``encoded()`` writes for the cell `sample` alone makes, when it
    /// ``Prepared/encodesAlone`` (versions 2–4), without making the cell.
    static func appendAlone(_ sample: Prepared, to out: inout [UInt8]) {
        appendDeviceDay(x: sample.x, y: sample.y, buckets: sample.buckets, to: &out)
    }

    /// One device-day's compact form: version 2 with buckets, else 3, or 4 when `y` is 0.
    private static func appendDeviceDay(
        x: Double, y: Double, buckets: [BucketDistribution.Bucket], to out: inout [UInt8]
    ) {
        let versions = singleDeviceDayVersions
        if !buckets.isEmpty {
            out.append(versions.buckets)
            writeNumber(x, into: &out)
            writeNumber(y, into: &out)
            writeBuckets(buckets, into: &out)
        } else if y == 0 {
            out.append(versions.zero)
            writeNumber(x, into: &out)
        } else {
            out.append(versions.bucketless)
            writeNumber(x, into: &out)
            writeNumber(y, into: &out)
        }
    }

    /// Appends the version-1 bytes of a cell's parts, its sketch already encoded.
    private static func appendVersion1(
        sketch: [UInt8], moments: RatioMoments, buckets: [BucketDistribution.Bucket], into out: inout [UInt8]
    ) {
        out.reserveCapacity(out.count + sketch.count + 64 + buckets.count * 8)
        out.append(encodingVersion)
        ByteWriter.varint(UInt64(sketch.count), into: &out)
        out.append(contentsOf: sketch)
        ByteWriter.double(moments.count, into: &out)
        ByteWriter.double(moments.meanX, into: &out)
        ByteWriter.double(moments.meanY, into: &out)
        ByteWriter.double(moments.cxx, into: &out)
        ByteWriter.double(moments.cyy, into: &out)
        ByteWriter.double(moments.cxy, into: &out)
        writeBuckets(buckets, into: &out)
    }

    /// Whether ``singleDeviceDay(x:y:buckets:)`` of this cell's pair rebuilds it exactly (its
    /// buckets are this cell's by construction: only the sketch and the moments are compared).
    private var isSingleDeviceDay: Bool {
        let (x, y) = (moments.meanX, moments.meanY)
        guard Self.isDeviceDayPair(x: x, y: y), RatioMoments(x: x, y: y) == moments else { return false }
        return sketch.equalsSingle(y / x)
    }

    /// Whether `(x, y)` is a pair one device-day can have: the only ones versions 2–4 hold
    /// (``isSingleDeviceDay``, ``singleDeviceDay(x:y:buckets:)``, ``Prepared/encodesAlone``).
    static func isDeviceDayPair(x: Double, y: Double) -> Bool {
        x.isFinite && x > 0 && y.isFinite && y >= 0 && (y / x).isFinite
    }

    /// The cell ``add(_:)`` makes of one device-day's pair: the sketch of `y / x` and the moments
    /// of `(x, y)`; `nil` when the pair is not one a device-day can have.
    static func singleDeviceDay(x: Double, y: Double, buckets: [BucketDistribution.Bucket]) -> ExplorerCell? {
        guard isDeviceDayPair(x: x, y: y) else { return nil }
        let value = y / x
        var sketch = QuantileSketch()
        sketch.add(value)
        return ExplorerCell(sketch: sketch, moments: RatioMoments(x: x, y: y), checkedBuckets: buckets)
    }

    private static func writeBuckets(_ buckets: [BucketDistribution.Bucket], into out: inout [UInt8]) {
        ByteWriter.varint(UInt64(buckets.count), into: &out)
        for bucket in buckets {
            writeNumber(bucket.start, into: &out)
            writeNumber(bucket.end, into: &out)
            ByteWriter.varint(UInt64(bucket.count), into: &out)
        }
    }

    private static func readBuckets(_ reader: inout ByteReader) throws(SketchDecodingError) -> [BucketDistribution
        .Bucket]
    {
        let k = try reader.varint()
        guard k <= UInt64(maxBuckets) else { throw .invalid("more than \(maxBuckets) buckets") }
        var buckets: [BucketDistribution.Bucket] = []
        buckets.reserveCapacity(Int(k))
        for _ in 0..<Int(k) {
            let start = try readNumber(&reader)
            let end = try readNumber(&reader)
            let count = try reader.varint()
            guard start.isFinite, end.isFinite, start >= 0, end >= start else { throw .invalid("bucket bounds") }
            guard count >= 1, count <= UInt64(Int64.max) else { throw .invalid("bucket count") }
            if let last = buckets.last {
                guard (last.start, last.end) < (start, end) else { throw .invalid("buckets not ascending") }
            }
            buckets.append(BucketDistribution.Bucket(start: start, end: end, count: Int64(count)))
        }
        return buckets
    }

    /// Reads bytes written by ``encoded()``; throws ``SketchDecodingError`` on anything else.
    package init(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        switch try Self.decode(bytes) {
        case .cell(let cell): self = cell
        case .parts(let sketch, let moments, let buckets):
            self.init(sketch: QuantileSketch(sketch), moments: moments, checkedBuckets: buckets)
        }
    }

    /// Adds the cell `bytes` hold (as ``encoded()`` wrote them) to this one, equal to decoding it
    /// and ``merge(_:)``, without the dense copy of its sketch; throws (changing nothing) on
    /// anything ``init(decoding:)`` refuses.
    package mutating func merge(decoding bytes: some Collection<UInt8>) throws(SketchDecodingError) {
        switch try Self.decode(bytes) {
        case .cell(let cell): merge(cell)
        case .parts(let sketch, let moments, let buckets): merge(sketch: sketch, moments: moments, buckets: buckets)
        }
    }

    /// Appends the bytes of the cell `stored` holds (as ``encoded()`` wrote it) merged with
    /// `incoming` to `out`: equal to decoding it, ``merge(_:)`` and ``encoded()``, for less (the
    /// stored sketch is not made dense, no cell is made; a fold's prepare merges every touched cell
    /// of its version rows this way). `scratch` is a buffer for the sketch, reused by the caller
    /// across cells. Returns `false`, `out` unchanged, where this path does not apply (a stored cell
    /// of one device-day, an empty side, a merge that would collapse sketch buckets or coarsen
    /// histogram ones): the caller decodes and merges. Throws, as decoding does, when `stored`
    /// does not read.
    package static func appendMerged(
        stored: some Collection<UInt8>, with incoming: ExplorerCell, into out: inout [UInt8],
        scratch: inout [UInt8]
    ) throws(SketchDecodingError) -> Bool {
        guard case .parts(let sketch, let moments, var buckets) = try decode(stored) else { return false }
        if !incoming.buckets.isEmpty, !addInPlace(incoming.buckets, to: &buckets) {
            buckets = mergeBuckets(buckets, incoming.buckets)
            guard buckets.count <= maxBuckets else { return false }
        }
        scratch.removeAll(keepingCapacity: true)
        guard QuantileSketch.encodeMerged(sketch, incoming.sketch, into: &scratch) else { return false }
        var merged = moments
        merged.merge(incoming.moments)
        appendVersion1(sketch: scratch, moments: merged, buckets: buckets, into: &out)
        return true
    }

    /// A decoded, checked cell: a device-day's (versions 2–4), or the parts of version 1.
    private enum Decoded {
        case cell(ExplorerCell)
        case parts(QuantileSketch.Sparse, RatioMoments, [BucketDistribution.Bucket])
    }

    private static func decode(_ bytes: some Collection<UInt8>) throws(SketchDecodingError) -> Decoded {
        guard bytes.count <= Self.maxEncodedSize else { throw .invalid("longer than any explorer cell") }
        var reader = ByteReader(bytes)
        let version = reader.byte()
        let versions = Self.singleDeviceDayVersions
        if version == versions.buckets || version == versions.bucketless || version == versions.zero {
            let x = try Self.readNumber(&reader)
            let y = version == versions.zero ? 0 : try Self.readNumber(&reader)
            let buckets = version == versions.buckets ? try Self.readBuckets(&reader) : []
            guard reader.atEnd else { throw .trailingBytes }
            guard let cell = Self.singleDeviceDay(x: x, y: y, buckets: buckets) else {
                throw .invalid("a device-day's pair out of range")
            }
            return .cell(cell)
        }
        guard version == Self.encodingVersion else { throw .unsupportedVersion(version) }
        let length = try reader.varint()
        guard length <= UInt64(QuantileSketch.maxEncodedSize) else { throw .invalid("sketch longer than any sketch") }
        let sketch = try QuantileSketch.Sparse(decoding: try reader.take(Int(length)))
        // Read in the order written (arguments are evaluated left to right), into no array.
        let moments = try RatioMoments(
            checkedCount: try reader.double(), meanX: try reader.double(), meanY: try reader.double(),
            cxx: try reader.double(), cyy: try reader.double(), cxy: try reader.double())
        if sketch.count < 1 << 53 {
            guard moments.count == Double(sketch.count) else { throw .invalid("moments and sketch count differ") }
        }
        let buckets = try Self.readBuckets(&reader)
        guard reader.atEnd else { throw .trailingBytes }
        if !buckets.isEmpty {
            guard sketch.count > 0 else { throw .invalid("histogram buckets without device-days") }
        }
        return .parts(sketch, moments, buckets)
    }

    private static let exactLimit: Double = 9_007_199_254_740_992  // 2^53

    /// The divisors of the hour forms, by the low two bits of their tag.
    private static let hourDivisors: (tag1: Double, tag3: Double) = (3_600_000, 3_600)

    static func writeNumber(_ value: Double, into out: inout [UInt8]) {
        if value >= 0, value < exactLimit {
            if value.rounded() == value { return ByteWriter.varint(UInt64(value) << 1, into: &out) }
            if let whole = hours(value, divisor: hourDivisors.tag3) {
                return ByteWriter.varint(whole << 2 | 3, into: &out)
            }
            if let whole = hours(value, divisor: hourDivisors.tag1) {
                return ByteWriter.varint(whole << 2 | 1, into: &out)
            }
        }
        ByteWriter.varint(1, into: &out)
        ByteWriter.double(value, into: &out)
    }

    /// The whole `m` ≥ 1 below 2^53 whose `m / divisor` is `value` exactly, if any.
    private static func hours(_ value: Double, divisor: Double) -> UInt64? {
        let whole = (value * divisor).rounded()
        guard whole >= 1, whole < exactLimit, whole / divisor == value else { return nil }
        return UInt64(whole)
    }

    static func readNumber(_ reader: inout ByteReader) throws(SketchDecodingError) -> Double {
        let tag = try reader.varint()
        if tag & 1 == 0 {
            let value = tag >> 1
            guard value < 1 << 53 else { throw .invalid("integer bound above 2^53") }
            return Double(value)
        }
        if tag == 1 { return try reader.double() }
        let whole = tag >> 2
        guard whole >= 1, whole < 1 << 53 else { throw .invalid("unknown number tag") }
        return Double(whole) / (tag & 3 == 3 ? hourDivisors.tag3 : hourDivisors.tag1)
    }
}
