import LifelineModel

/// Day literals in tests: `DayRange(from: "2019-10-21", to: "2019-10-22")`. A literal that is not
/// a valid day stops the test run at once (a typo in a test, not a case to test).
extension UTCDay: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let day = UTCDay(value) else { preconditionFailure("not a day YYYY-MM-DD: \(value)") }
        self = day
    }
}
