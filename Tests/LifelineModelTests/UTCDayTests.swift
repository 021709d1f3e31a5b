import Foundation
import LifelineModel
import Testing

@Suite("The one calendar")
struct UTCDayTests {
    @Test("day numbers round-trip through dates and agree with Foundation's UTC calendar")
    func roundTripsAndAgreesWithFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let (y, m, d) = UTCDay.date(fromDays: days)
            #expect(UTCDay.isValid(year: y, month: m, day: d))
            #expect(UTCDay.days(year: y, month: m, day: d) == days)
            if y >= 1900, y <= 2100 {
                let date = Date(timeIntervalSince1970: Double(days) * 86_400)
                let parts = calendar.dateComponents([.year, .month, .day], from: date)
                #expect((parts.year, parts.month, parts.day) == (y, m, d))
            }
        }
    }

    @Test("leap years and impossible dates")
    func leapYears() {
        #expect(UTCDay.isValid(year: 2024, month: 2, day: 29))
        #expect(!UTCDay.isValid(year: 2026, month: 2, day: 29))
        #expect(!UTCDay.isValid(year: 2100, month: 2, day: 29))
        #expect(UTCDay.isValid(year: 2000, month: 2, day: 29))
        #expect(!UTCDay.isValid(year: 2026, month: 4, day: 31))
        #expect(!UTCDay.isValid(year: 2026, month: 13, day: 1))
        #expect(UTCDay.days(year: 1970, month: 1, day: 1) == 0)
        #expect(UTCDay.days(year: 2026, month: 10, day: 31) == 20_757)
    }
}
