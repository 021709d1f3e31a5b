/// A calendar day in UTC: the one day type of Lifeline (payload days, query windows, rollups,
/// reports). Parsed once at the edge from `YYYY-MM-DD`, then carried as a day number (days since
/// 1970-01-01, proleptic Gregorian, after Howard Hinnant's `days_from_civil` / `civil_from_days`).
package struct UTCDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    package let ordinal: Int

    /// The first day Lifeline reads or writes: 2000-01-01 (MetricKit began in 2019).
    package static let first = UTCDay(unchecked: 10_957)
    /// The last day with a four-digit year: 9999-12-31.
    package static let last = UTCDay(unchecked: 2_932_896)

    private init(unchecked ordinal: Int) { self.ordinal = ordinal }

    /// The day `ordinal` days after 1970-01-01, if between ``first`` and ``last``.
    package init?(ordinal: Int) {
        guard ordinal >= Self.first.ordinal && ordinal <= Self.last.ordinal else { return nil }
        self.ordinal = ordinal
    }

    /// Exactly `YYYY-MM-DD` (ASCII digits, no sign, a real date) between ``first`` and ``last``.
    package init?(_ text: some StringProtocol) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10)
        for byte in text.utf8 {
            guard bytes.count < 10 else { return nil }
            bytes.append(byte)
        }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                let digit = bytes[i] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10),
            Self.isValid(year: y, month: m, day: d)
        else { return nil }
        self.init(ordinal: Self.days(year: y, month: m, day: d))
    }

    /// The UTC day of an epoch second (any second: not limited to ``first``…``last``).
    package init(epochSeconds: Int64) {
        let (quotient, remainder) = epochSeconds.quotientAndRemainder(dividingBy: 86_400)
        ordinal = Int(remainder < 0 ? quotient - 1 : quotient)
    }

    /// `YYYY-MM-DD` (years outside 0…9999 clamped to that range).
    package var string: String {
        let (y, m, d) = Self.date(fromDays: ordinal)
        return Self.pad(min(max(y, 0), 9_999), 4) + "-" + Self.pad(m, 2) + "-" + Self.pad(d, 2)
    }

    package var description: String { string }

    /// This day, moved into ``first``…``last`` (the days a window may span).
    package var clamped: UTCDay { min(max(self, .first), .last) }

    /// Today (UTC), within ``first``…``last``.
    package static var today: UTCDay { UTCDay(epochSeconds: WallClock.nowSeconds()).clamped }

    /// The first second of the day.
    package var startEpochSeconds: Int64 { Int64(ordinal) * 86_400 }

    /// The day `days` later (earlier when negative).
    package func advanced(by days: Int) -> UTCDay { UTCDay(unchecked: ordinal + days) }

    package static func < (a: UTCDay, b: UTCDay) -> Bool { a.ordinal < b.ordinal }

    // MARK: Civil calendar arithmetic

    /// Days since 1970-01-01 of `year-month-day` (no validation: see ``isValid(year:month:day:)``).
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day number.
    package static func date(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Days in `month` of `year`.
    package static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Whether `year-month-day` is a real date.
    package static func isValid(year: Int, month: Int, day: Int) -> Bool {
        (1...12).contains(month) && (1...daysInMonth(year: year, month: month)).contains(day)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// The one timestamp format of Lifeline's output (API, webhooks, reports): UTC ISO 8601 /
/// RFC 3339 with seconds, `2026-11-22T10:04:05Z`.
package enum UTCTimestamp {
    package static func iso8601(_ epochSeconds: Int64) -> String {
        let day = UTCDay(epochSeconds: epochSeconds)
        let seconds = Int(epochSeconds - day.startEpochSeconds)
        return day.string + "T" + UTCDay.pad(seconds / 3600, 2) + ":" + UTCDay.pad(seconds / 60 % 60, 2) + ":"
            + UTCDay.pad(seconds % 60, 2) + "Z"
    }
}
