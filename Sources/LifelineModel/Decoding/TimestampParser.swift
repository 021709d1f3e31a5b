/// Hand-written parsing of MetricKit timestamps (no `DateFormatter`).
///
/// Accepted: `YYYY-MM-DD HH:MM:SS` (a `T` instead of the space is tolerated), optional fraction
/// `.fff` (ignored), then optional zone: `+HHMM`, `-HHMM`, `+HH:MM`, `+HH` or `Z`, with or
/// without a space before it. No zone means UTC.
enum TimestampParser {
    /// Seconds since 1970-01-01 UTC, or `nil` when the text does not match.
    static func epochSeconds(_ b: UnsafeRawBufferPointer) -> Int64? {
        let n = b.count
        var i = 0
        while i < n && b[i] == 0x20 { i += 1 }

        func digits(_ count: Int) -> Int? {
            guard i + count <= n else { return nil }
            var v = 0
            for k in 0..<count {
                let d = b[i + k] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                v = v * 10 + Int(d)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < n, b[i] == c else { return false }
            i += 1
            return true
        }

        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard i < n, b[i] == 0x20 || b[i] == UInt8(ascii: "T") else { return nil }
        i += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= UTCDay.daysInMonth(year: year, month: month), hour < 24,
            minute < 60,
            second <= 60
        else { return nil }
        if i < n && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < n && JSONTape.isDigit(b[i]) { i += 1 }
        }
        while i < n && b[i] == 0x20 { i += 1 }
        var offsetSeconds = 0
        if i < n {
            let c = b[i]
            if c == UInt8(ascii: "Z") {
                i += 1
            } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                i += 1
                guard let hh = digits(2) else { return nil }
                var mm = 0
                if i < n {
                    _ = expect(UInt8(ascii: ":"))
                    guard let m = digits(2) else { return nil }
                    mm = m
                }
                guard hh <= 23, mm <= 59 else { return nil }
                offsetSeconds = (hh * 3600 + mm * 60) * (c == UInt8(ascii: "-") ? -1 : 1)
            } else {
                return nil
            }
        }
        while i < n && b[i] == 0x20 { i += 1 }
        guard i == n else { return nil }
        let days = UTCDay.days(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
    }
}

extension Timestamp {
    /// Parses `"2019-10-21 07:00:00 +0000"`, `"… +0100"` or zoneless `"2022-11-14 23:59:00"` (UTC).
    /// Never fails: unparseable text gives `epochSeconds == nil` and keeps ``raw``.
    package static func parse(_ raw: String) -> Timestamp {
        var text = raw
        let epoch = text.withUTF8 { TimestampParser.epochSeconds(UnsafeRawBufferPointer($0)) }
        return Timestamp(epochSeconds: epoch, raw: raw)
    }
}
