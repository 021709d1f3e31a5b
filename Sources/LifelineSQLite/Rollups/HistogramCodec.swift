import LifelineModel
import LifelineStorage

/// The packed form of histogram buckets stored in `histograms.buckets` and `signposts.durations`.
///
/// Layout: a format byte (`1`), a LEB128 varint `scale` (the greatest common divisor of the
/// integral steps below, at least 1), then per bucket a LEB128 varint `h` whose two low bits are a tag:
///
/// - tag `0`, contiguous: `start` is the previous bucket's `end` (0 before the first bucket),
///   `end = start + (h >> 2) × scale`, then `count` as a varint (non-negative);
/// - tag `1`, general: `start` as a number relative to the previous end, `end` as a number
///   relative to `start` (or to the previous end when `start` is NULL), then `count` as a zigzag varint.
///
/// A number is a varint `v` tagged the same way: `0` plus `(v >> 2) × scale`, `1` minus
/// `(v >> 2) × scale`, `2` NULL, `3` followed by the absolute value as the 8 little-endian bytes of
/// an IEEE double (non-integral or out of the exact integer range). Typical MetricKit histograms
/// (`1,000 ms`–`1,010 ms`, `1,010 ms`–`1,020 ms`, …) thus cost about 3 bytes per bucket.
package enum HistogramCodec {
    static let format: UInt8 = 1
    private static let exactLimit = 9_007_199_254_740_992.0  // 2^53

    /// Packs `buckets` in their order.
    package static func encode(_ buckets: [HistogramBucket]) -> [UInt8] {
        let scale = Self.scale(of: buckets)
        var out: [UInt8] = [format]
        out.reserveCapacity(2 + buckets.count * 4)
        appendVarint(scale, to: &out)
        let step = Double(scale)
        var cursor = 0.0
        for bucket in buckets {
            if let start = bucket.start, let end = bucket.end, start == cursor, bucket.count >= 0,
                isExactInteger(start), isExactInteger(end), end >= start
            {
                appendVarint((UInt64(end - start) / scale) << 2, to: &out)
                appendVarint(UInt64(bucket.count), to: &out)
            } else {
                out.append(1)
                appendNumber(bucket.start, base: cursor, step: step, to: &out)
                appendNumber(bucket.end, base: bucket.start ?? cursor, step: step, to: &out)
                appendVarint(UInt64(bitPattern: (bucket.count << 1) ^ (bucket.count >> 63)), to: &out)
            }
            cursor = bucket.end ?? bucket.start ?? cursor
        }
        return out
    }

    /// Unpacks buckets written by ``encode(_:)``; throws ``StoreError/Code/internal`` on damaged input.
    package static func decode(_ bytes: [UInt8]) throws(StoreError) -> [HistogramBucket] {
        guard bytes.first == format else { throw damaged }
        var index = 1
        let scale = try readVarint(bytes, &index)
        guard scale >= 1, scale < 1 << 53 else { throw damaged }
        let step = Double(scale)
        var cursor = 0.0
        var buckets: [HistogramBucket] = []
        while index < bytes.count {
            let head = try readVarint(bytes, &index)
            let bucket: HistogramBucket
            switch head & 3 {
            case 0:
                let count = try readVarint(bytes, &index)
                guard count <= UInt64(Int64.max) else { throw damaged }
                bucket = HistogramBucket(start: cursor, end: cursor + Double(head >> 2) * step, count: Int64(count))
            case 1 where head == 1:
                let start = try readNumber(bytes, &index, base: cursor, step: step)
                let end = try readNumber(bytes, &index, base: start ?? cursor, step: step)
                let zigzag = try readVarint(bytes, &index)
                let count = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
                bucket = HistogramBucket(start: start, end: end, count: count)
            default:
                throw damaged
            }
            buckets.append(bucket)
            cursor = bucket.end ?? bucket.start ?? cursor
        }
        return buckets
    }

    private static var damaged: StoreError { StoreError(.internal, "a stored histogram is damaged") }

    private static func isExactInteger(_ value: Double) -> Bool {
        value.isFinite && value.rounded(.towardZero) == value && abs(value) < exactLimit
    }

    /// The integral step (as `UInt64`) between `value` and `base`, when both are exact integers.
    private static func integralStep(_ value: Double?, from base: Double) -> UInt64? {
        guard let value, isExactInteger(value), isExactInteger(base), isExactInteger(value - base) else { return nil }
        return UInt64((value - base).magnitude)
    }

    /// The greatest common divisor of every integral step the encoding will write (1 if none).
    private static func scale(of buckets: [HistogramBucket]) -> UInt64 {
        func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 { b == 0 ? a : gcd(b, a % b) }
        var result: UInt64 = 0
        var cursor = 0.0
        for bucket in buckets {
            if let step = integralStep(bucket.start, from: cursor) { result = gcd(result, step) }
            if let step = integralStep(bucket.end, from: bucket.start ?? cursor) { result = gcd(result, step) }
            cursor = bucket.end ?? bucket.start ?? cursor
        }
        return max(result, 1)
    }

    private static func appendNumber(_ value: Double?, base: Double, step: Double, to out: inout [UInt8]) {
        guard let value else {
            out.append(2)
            return
        }
        if let magnitude = integralStep(value, from: base) {
            let units = magnitude / UInt64(step)
            appendVarint((units << 2) | (value < base ? 1 : 0), to: &out)
        } else {
            out.append(3)
            var bits = value.bitPattern
            for _ in 0..<8 {
                out.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }
    }

    private static func readNumber(
        _ bytes: [UInt8], _ index: inout Int, base: Double, step: Double
    ) throws(StoreError) -> Double? {
        let tagged = try readVarint(bytes, &index)
        switch tagged & 3 {
        case 0: return base + Double(tagged >> 2) * step
        case 1: return base - Double(tagged >> 2) * step
        case 2 where tagged == 2: return nil
        case 3 where tagged == 3:
            guard index + 8 <= bytes.count else { throw damaged }
            var bits: UInt64 = 0
            for shift in 0..<8 {
                bits |= UInt64(bytes[index + shift]) << (8 * UInt64(shift))
            }
            index += 8
            return Double(bitPattern: bits)
        default:
            throw damaged
        }
    }

    private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    private static func readVarint(_ bytes: [UInt8], _ index: inout Int) throws(StoreError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw damaged
    }
}
