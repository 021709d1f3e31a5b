import LifelineModel

/// A grouping dimension of the query model.
package enum GroupDimension: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case version
    case os
    case device
    case day
    /// An app-defined state of iOS 27 reports (domain, label, metadata).
    case appState = "app_state"
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
    /// App states `domain/label` (any metadata); empty: no filter. Only iOS 27 data has states.
    package var appStates: [String] = []
    /// Only these device types (empty: all).
    package var devices: [String] = []
    /// The dimensions figures are split by, in order (empty: one total row).
    package var groupBy: [GroupDimension] = []

    package init(
        app: String, days: DayRange, versions: [String] = [], oses: [String] = [], devices: [String] = [],
        appStates: [String] = [], groupBy: [GroupDimension] = []
    ) {
        self.app = app
        self.days = days
        self.versions = versions
        self.oses = oses
        self.devices = devices
        self.appStates = appStates
        self.groupBy = groupBy
    }

    /// Whether the scope is about app states (filtered or grouped by them): answered from the
    /// per-state rows of iOS 27 reports instead of the rollups.
    package var usesAppStates: Bool { !appStates.isEmpty || groupBy.contains(.appState) }

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
    package var appState: ReportedState?

    package init(
        version: String? = nil, os: String? = nil, device: String? = nil, day: String? = nil,
        appState: ReportedState? = nil
    ) {
        self.version = version
        self.os = os
        self.device = device
        self.day = day
        self.appState = appState
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
        case .appState:
            appState.map {
                $0.metadata == "{}" ? "\($0.domain)/\($0.label)" : "\($0.domain)/\($0.label) \($0.metadata)"
            }
        }
    }

    /// This key with only `dimensions` kept.
    package func projected(onto dimensions: [GroupDimension]) -> GroupKey {
        GroupKey(
            version: dimensions.contains(.version) ? version : nil,
            os: dimensions.contains(.os) ? os : nil,
            device: dimensions.contains(.device) ? device : nil,
            day: dimensions.contains(.day) ? day : nil,
            appState: dimensions.contains(.appState) ? appState : nil)
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
        if (a.os, a.device) != (b.os, b.device) { return (a.os ?? "", a.device ?? "") < (b.os ?? "", b.device ?? "") }
        switch (a.appState, b.appState) {
        case (nil, .some): return true
        case (.some(let x), .some(let y)): return x < y
        default: return false
        }
    }
}
