/// Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01, UTC), after
/// Howard Hinnant's `days_from_civil` / `civil_from_days`. Shared by timestamp parsing, the query
/// model's day ranges and the simulator, so there is one calendar in the codebase.
package enum CivilDate {
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
}
