/// Lenient parsing of MetricKit's locale-formatted measurement strings (`"1,530毫秒"`, `"1 000 ms"`).
///
/// Grammar: optional spaces, optional sign, a number with optional separators, optional spaces,
/// a unit. Separators are `,` `.` `'` space, U+00A0, U+202F, U+2009; a separator belongs to the
/// number only when a digit follows it. Deciding which separator is the decimal mark:
/// - spaces and `'` always group;
/// - when both `,` and `.` occur, the last one is the decimal mark (it must occur once);
/// - a single kind occurring several times groups (`"1,106,818"`);
/// - a single `,` or `.` groups when exactly three digits follow it and one to three non-zero-only
///   digits precede it (`"1,530"` → 1530, `"1.000 ms"` → 1000); otherwise it is the decimal mark
///   (`"1,5 s"` → 1.5, `"0.500 ms"` → 0.5, `"1234,567"` → 1234.567); after space grouping it is the
///   decimal mark (`"1 000,5"`).
///
/// Units are matched case-insensitively (ASCII) against ``units``; kB/MB/GB are decimal
/// (MetricKit uses `UnitInformationStorage`, where a kilobyte is 1,000 bytes), KiB/MiB/GiB binary.
enum MeasurementParser {
    /// A parsed measurement: the value in `unit`, and the factor applied to the written number.
    struct Parsed {
        var value: Double
        var unit: MeasurementUnit
        var factor: Double
    }

    private struct UnitEntry: Sendable {
        let text: [UInt8]
        let unit: MeasurementUnit
        let factor: Double

        init(_ text: String, _ unit: MeasurementUnit, _ factor: Double = 1) {
            self.text = Array(text.utf8)
            self.unit = unit
            self.factor = factor
        }
    }

    /// Known unit spellings, lowercase, most frequent first.
    private static let units: [UnitEntry] = [
        UnitEntry("ms", .milliseconds),
        UnitEntry("kb", .bytes, 1000),
        UnitEntry("sec", .milliseconds, 1000),
        UnitEntry("s", .milliseconds, 1000),
        UnitEntry("ms per s", .millisecondsPerSecond),
        UnitEntry("kiloinstructions", .instructions, 1000),
        UnitEntry("bars", .bars),
        UnitEntry("apl", .apl),
        UnitEntry("byte", .bytes),
        UnitEntry("bytes", .bytes),
        UnitEntry("b", .bytes),
        UnitEntry("mb", .bytes, 1_000_000),
        UnitEntry("gb", .bytes, 1_000_000_000),
        UnitEntry("tb", .bytes, 1_000_000_000_000),
        UnitEntry("kib", .bytes, 1024),
        UnitEntry("mib", .bytes, 1_048_576),
        UnitEntry("gib", .bytes, 1_073_741_824),
        UnitEntry("kilobyte", .bytes, 1000),
        UnitEntry("kilobytes", .bytes, 1000),
        UnitEntry("megabyte", .bytes, 1_000_000),
        UnitEntry("megabytes", .bytes, 1_000_000),
        UnitEntry("gigabyte", .bytes, 1_000_000_000),
        UnitEntry("gigabytes", .bytes, 1_000_000_000),
        UnitEntry("字节", .bytes),
        UnitEntry("千字节", .bytes, 1000),
        UnitEntry("兆字节", .bytes, 1_000_000),
        UnitEntry("吉字节", .bytes, 1_000_000_000),
        UnitEntry("毫秒", .milliseconds),
        UnitEntry("秒", .milliseconds, 1000),
        UnitEntry("分钟", .milliseconds, 60_000),
        UnitEntry("小时", .milliseconds, 3_600_000),
        UnitEntry("微秒", .milliseconds, 0.001),
        UnitEntry("纳秒", .milliseconds, 0.000_001),
        UnitEntry("secs", .milliseconds, 1000),
        UnitEntry("second", .milliseconds, 1000),
        UnitEntry("seconds", .milliseconds, 1000),
        UnitEntry("msec", .milliseconds),
        UnitEntry("msecs", .milliseconds),
        UnitEntry("millisecond", .milliseconds),
        UnitEntry("milliseconds", .milliseconds),
        UnitEntry("min", .milliseconds, 60_000),
        UnitEntry("mins", .milliseconds, 60_000),
        UnitEntry("minute", .milliseconds, 60_000),
        UnitEntry("minutes", .milliseconds, 60_000),
        UnitEntry("h", .milliseconds, 3_600_000),
        UnitEntry("hr", .milliseconds, 3_600_000),
        UnitEntry("hrs", .milliseconds, 3_600_000),
        UnitEntry("hour", .milliseconds, 3_600_000),
        UnitEntry("hours", .milliseconds, 3_600_000),
        UnitEntry("µs", .milliseconds, 0.001),  // U+00B5 micro sign
        UnitEntry("μs", .milliseconds, 0.001),  // U+03BC greek mu
        UnitEntry("us", .milliseconds, 0.001),
        UnitEntry("microsecond", .milliseconds, 0.001),
        UnitEntry("microseconds", .milliseconds, 0.001),
        UnitEntry("ns", .milliseconds, 0.000_001),
        UnitEntry("nanosecond", .milliseconds, 0.000_001),
        UnitEntry("nanoseconds", .milliseconds, 0.000_001),
        UnitEntry("ms/s", .millisecondsPerSecond),
        UnitEntry("ms per sec", .millisecondsPerSecond),
        UnitEntry("instructions", .instructions),
        UnitEntry("instruction", .instructions),
        UnitEntry("megainstructions", .instructions, 1_000_000),
        UnitEntry("gigainstructions", .instructions, 1_000_000_000),
        UnitEntry("bar", .bars),
        UnitEntry("%", .percent),
        UnitEntry("percent", .percent),
        UnitEntry("", .count),
    ]

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// Byte length of a space-like character at `i` (ASCII space/tab, U+00A0, U+2009, U+202F), else 0.
    @inline(__always)
    private static func spaceLength(_ b: UnsafeRawBufferPointer, _ i: Int) -> Int {
        let c = b[i]
        if c == 0x20 || c == 0x09 { return 1 }
        if c == 0xC2 && i + 1 < b.count && b[i + 1] == 0xA0 { return 2 }
        if c == 0xE2 && i + 2 < b.count && b[i + 1] == 0x80 && (b[i + 2] == 0xAF || b[i + 2] == 0x89) { return 3 }
        return 0
    }

    private enum Separator {
        case comma, dot, group
    }

    /// Parses a measurement; `nil` when it has no number or an unknown unit.
    static func parse(_ b: UnsafeRawBufferPointer) -> Parsed? {
        let n = b.count
        var i = 0
        while i < n, case let s = spaceLength(b, i), s > 0 { i += s }
        var negative = false
        if i < n && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) {
            negative = b[i] == UInt8(ascii: "-")
            i += 1
        } else if i + 2 < n && b[i] == 0xE2 && b[i + 1] == 0x88 && b[i + 2] == 0x92 {  // U+2212 minus
            negative = true
            i += 3
        }
        guard i < n, JSONTape.isDigit(b[i]) else { return nil }

        var mantissa: UInt64 = 0
        var big = 0.0  // used once the mantissa would overflow
        var overflowed = false
        var digitCount = 0
        var commaCount = 0
        var dotCount = 0
        var groupCount = 0
        var lastCommaDigits = 0  // digits before the last comma
        var lastDotDigits = 0
        var firstSeparatorDigits = -1  // digits before the first separator
        var lastSeparator: Separator?
        var leadingZeroOnly = true  // the digits before the first separator are all zero

        while i < n {
            let c = b[i]
            let d = c &- UInt8(ascii: "0")
            if d < 10 {
                if !overflowed && mantissa < 1_000_000_000_000_000_000 {
                    mantissa = mantissa * 10 + UInt64(d)
                } else {
                    if !overflowed {
                        big = Double(mantissa)
                        overflowed = true
                    }
                    big = big * 10 + Double(d)
                }
                if firstSeparatorDigits < 0 && d != 0 { leadingZeroOnly = false }
                digitCount += 1
                i += 1
                continue
            }
            // A separator counts only when a digit follows it.
            var length = 0
            var kind = Separator.group
            if c == UInt8(ascii: ",") {
                length = 1
                kind = .comma
            } else if c == UInt8(ascii: ".") {
                length = 1
                kind = .dot
            } else if c == UInt8(ascii: "'") || c == 0x20 {
                length = 1
            } else {
                length = spaceLength(b, i)
                if length == 0 && c == 0xE2 && i + 2 < n && b[i + 1] == 0x80 && b[i + 2] == 0x99 { length = 3 }  // ’
            }
            guard length > 0, i + length < n, JSONTape.isDigit(b[i + length]) else { break }
            if firstSeparatorDigits < 0 { firstSeparatorDigits = digitCount }
            switch kind {
            case .comma:
                commaCount += 1
                lastCommaDigits = digitCount
            case .dot:
                dotCount += 1
                lastDotDigits = digitCount
            case .group:
                groupCount += 1
            }
            lastSeparator = kind
            i += length
        }

        // Which separator is the decimal mark; `decimalDigits` = digits before it.
        var decimalDigits = -1
        if commaCount > 0 && dotCount > 0 {
            guard lastSeparator != .group else { return nil }
            if lastSeparator == .comma {
                guard commaCount == 1 else { return nil }
                decimalDigits = lastCommaDigits
            } else {
                guard dotCount == 1 else { return nil }
                decimalDigits = lastDotDigits
            }
        } else if commaCount == 1 || dotCount == 1 {
            let before = commaCount == 1 ? lastCommaDigits : lastDotDigits
            let after = digitCount - before
            if groupCount > 0 {
                // "1 000,5": a single mark after space grouping is decimal, unless it is itself
                // followed by grouping (a mark before spaces is odd; treat as decimal anyway).
                decimalDigits = before
            } else if after == 3 && before >= 1 && before <= 3 && !leadingZeroOnly {
                decimalDigits = -1
            } else {
                decimalDigits = before
            }
        }

        var value = overflowed ? big : Double(mantissa)
        if decimalDigits >= 0 {
            let fraction = digitCount - decimalDigits
            if fraction <= 22 {
                value /= powersOfTen[fraction]
            } else {
                for _ in 0..<fraction { value /= 10 }
            }
        }
        if negative { value = -value }

        // Unit.
        while i < n, case let s = spaceLength(b, i), s > 0 { i += s }
        var end = n
        while end > i {
            // Trim trailing ASCII spaces and the multi-byte spaces.
            if b[end - 1] == 0x20 || b[end - 1] == 0x09 {
                end -= 1
            } else if end - 2 >= i && b[end - 2] == 0xC2 && b[end - 1] == 0xA0 {
                end -= 2
            } else if end - 3 >= i && b[end - 3] == 0xE2 && b[end - 2] == 0x80
                && (b[end - 1] == 0xAF || b[end - 1] == 0x89)
            {
                end -= 3
            } else {
                break
            }
        }
        var entry = lookup(b, i, end)
        if entry == nil && end > i && b[end - 1] == UInt8(ascii: ".") {
            entry = lookup(b, i, end - 1)  // "20 secs."
        }
        guard let entry else { return nil }
        return Parsed(value: value * entry.factor, unit: entry.unit, factor: entry.factor)
    }

    private static let millisecondsEntry = UnitEntry("ms", .milliseconds)
    private static let kilobytesEntry = UnitEntry("kb", .bytes, 1000)
    private static let secondsEntry = UnitEntry("sec", .milliseconds, 1000)

    private static func lookup(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UnitEntry? {
        let length = end - start
        // The spellings of nearly every value in an English payload, without a table scan.
        if length == 2 {
            if b[start] == UInt8(ascii: "m") && b[start + 1] == UInt8(ascii: "s") { return millisecondsEntry }
            if b[start] == UInt8(ascii: "k") && b[start + 1] == UInt8(ascii: "B") { return kilobytesEntry }
        } else if length == 3 && b[start] == UInt8(ascii: "s") && b[start + 1] == UInt8(ascii: "e")
            && b[start + 2] == UInt8(ascii: "c")
        {
            return secondsEntry
        }
        for entry in units where entry.text.count == length {
            var k = 0
            while k < length {
                var c = b[start + k]
                if c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") { c += 32 }
                if c != entry.text[k] { break }
                k += 1
            }
            if k == length { return entry }
        }
        return nil
    }
}

extension Measurement {
    /// Parses a measurement string leniently (see ``MeasurementParser``). Never fails: an
    /// unparseable string gives `value == nil`, `unit == nil` and keeps ``raw``.
    package static func parse(_ raw: String) -> Measurement {
        var text = raw
        let parsed = text.withUTF8 { MeasurementParser.parse(UnsafeRawBufferPointer($0)) }
        return Measurement(value: parsed?.value, unit: parsed?.unit, raw: raw)
    }

    /// Whether the raw text was parsed into a value.
    package var isParsed: Bool { value != nil }
}
