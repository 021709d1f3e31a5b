import LifelineModel

/// A grouping dimension of the query model.
package enum GroupDimension: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case version
    case os
    case device
    case day
}

/// An inclusive range of UTC days, `YYYY-MM-DD`.
package struct DayRange: Sendable, Equatable, Hashable {
    package var from: String
    package var to: String

    package init(from: String, to: String) {
        self.from = from
        self.to = to
    }

    /// Number of days in the range (inclusive).
    package var dayCount: Int {
        guard let a = Day.ordinal(from), let b = Day.ordinal(to) else { return 0 }
        return max(0, b - a + 1)
    }
}

/// Which slice of an app's data a question is about.
package struct Scope: Sendable, Equatable, Hashable {
    package var app: String
    package var days: DayRange
    /// Only these app versions (empty: all).
    package var versions: [String] = []
    /// Only these OS versions, as stored (e.g. `iPhone OS 17.4 (21E219)`) (empty: all).
    package var oses: [String] = []
    /// Only these device types (empty: all).
    package var devices: [String] = []
    /// The dimensions figures are split by, in order (empty: one total row).
    package var groupBy: [GroupDimension] = []

    package init(
        app: String, days: DayRange, versions: [String] = [], oses: [String] = [], devices: [String] = [],
        groupBy: [GroupDimension] = []
    ) {
        self.app = app
        self.days = days
        self.versions = versions
        self.oses = oses
        self.devices = devices
        self.groupBy = groupBy
    }

    /// The same scope split by other dimensions.
    package func grouped(by dimensions: [GroupDimension]) -> Scope {
        var copy = self
        copy.groupBy = dimensions
        return copy
    }
}

/// The values of the grouping dimensions of one row; a dimension not grouped by is `nil`.
/// Unknown values (empty strings in payloads) are `"unknown"`.
package struct GroupKey: Sendable, Equatable, Hashable, Comparable {
    package var version: String?
    package var os: String?
    package var device: String?
    package var day: String?

    package init(version: String? = nil, os: String? = nil, device: String? = nil, day: String? = nil) {
        self.version = version
        self.os = os
        self.device = device
        self.day = day
    }

    /// The total row.
    package static let all = GroupKey()

    /// The value of `dimension`.
    package subscript(dimension: GroupDimension) -> String? {
        switch dimension {
        case .version: version
        case .os: os
        case .device: device
        case .day: day
        }
    }

    /// This key with only `dimensions` kept.
    package func projected(onto dimensions: [GroupDimension]) -> GroupKey {
        GroupKey(
            version: dimensions.contains(.version) ? version : nil,
            os: dimensions.contains(.os) ? os : nil,
            device: dimensions.contains(.device) ? device : nil,
            day: dimensions.contains(.day) ? day : nil)
    }

    /// Labels for alerts and metrics: `version`, `os`, `device`, `day` for the set dimensions.
    package var labels: [String: String] {
        var labels: [String: String] = [:]
        for dimension in GroupDimension.allCases {
            if let value = self[dimension] { labels[dimension.rawValue] = value }
        }
        return labels
    }

    package static func < (a: GroupKey, b: GroupKey) -> Bool {
        func parts(_ k: GroupKey) -> [String] {
            [k.day ?? "", VersionOrder.key(k.version ?? ""), k.os ?? "", k.device ?? ""]
        }
        return parts(a).lexicographicallyPrecedes(parts(b))
    }
}

/// Sorts version strings numerically (`4.10.0` after `4.9.1`).
enum VersionOrder {
    static func key(_ version: String) -> String {
        version.split(separator: ".").map { part in
            if let n = Int(part) { return String(repeating: "0", count: max(0, 8 - String(n).count)) + String(n) }
            return String(part)
        }.joined(separator: ".")
    }
}

/// Day arithmetic on `YYYY-MM-DD` strings (UTC, proleptic Gregorian; see ``CivilDate``).
package enum Day {
    /// The first day Lifeline reads or writes: 2000-01-01 (MetricKit began in 2019).
    package static let firstOrdinal = 10_957
    /// The last day with a four-digit year: 9999-12-31.
    package static let lastOrdinal = 2_932_896

    /// Days since 1970-01-01 of exactly `YYYY-MM-DD` (ASCII digits only, no sign) between
    /// 2000-01-01 and 9999-12-31; `nil` otherwise.
    package static func ordinal(_ day: String) -> Int? {
        let u = Array(day.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                let digit = u[i] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10),
            CivilDate.isValid(year: y, month: m, day: d)
        else { return nil }
        let ordinal = CivilDate.days(year: y, month: m, day: d)
        guard ordinal >= firstOrdinal && ordinal <= lastOrdinal else { return nil }
        return ordinal
    }

    /// The `YYYY-MM-DD` of a day ordinal.
    package static func string(_ ordinal: Int) -> String {
        let (y, m, d) = CivilDate.date(fromDays: ordinal)
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }

    /// The UTC day of an epoch second.
    package static func of(epochSeconds: Int64) -> String {
        string(Int((epochSeconds >= 0 ? epochSeconds : epochSeconds - 86_399) / 86_400))
    }
}
