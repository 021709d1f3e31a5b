import LifelineModel

/// A grouping dimension of the query model.
package enum GroupDimension: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case version
    case os
    case device
    case day
}

/// An inclusive range of UTC days.
package struct DayRange: Sendable, Equatable, Hashable {
    package var from: UTCDay
    package var to: UTCDay

    package init(from: UTCDay, to: UTCDay) {
        self.from = from
        self.to = to
    }

    /// The `count` days ending with `last`, starting no earlier than ``UTCDay/first``.
    package init(last: UTCDay, count: Int) {
        self.init(from: UTCDay(ordinal: last.ordinal - max(1, count) + 1) ?? .first, to: last)
    }

    /// Number of days in the range (inclusive).
    package var dayCount: Int { max(0, to.ordinal - from.ordinal + 1) }
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
        if a.day != b.day { return (a.day ?? "") < (b.day ?? "") }
        if a.version != b.version { return VersionOrder.precedes(a.version ?? "", b.version ?? "") }
        return (a.os ?? "", a.device ?? "") < (b.os ?? "", b.device ?? "")
    }
}
