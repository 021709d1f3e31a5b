import LifelineModel

/// A dimension of the explorer's `group_by` and filters.
package enum ExplorerDimension: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
    case version
    case device
    case os
    case appState = "app_state"
}

/// The key of one stored cell: the dimensions a fold keeps apart (the store adds app and day).
package struct ExplorerCellKey: Sendable, Equatable, Hashable {
    /// ``ExplorerMetric/id``.
    package var metric: String
    /// ``ExplorerObservation/subject`` (`""` for most metrics).
    package var subject: String
    package var version: String
    package var device: String
    package var os: String
    /// ``ExplorerObservation/appState``.
    package var appState: String

    package init(metric: String, subject: String = "", version: String, device: String, os: String, appState: String) {
        self.metric = metric
        self.subject = subject
        self.version = version
        self.device = device
        self.os = os
        self.appState = appState
    }

    /// The value of `dimension`.
    package func value(_ dimension: ExplorerDimension) -> String {
        switch dimension {
        case .version: version
        case .device: device
        case .os: os
        case .appState: appState
        }
    }
}

/// A row's identity while merging: metric, subject and the grouped keys.
private struct ExplorerRowKey: Hashable {
    var metric: String
    var subject: String
    var groups: ExplorerGroupKeys
}

/// The query side: merges cells into groups and computes their rows.
package enum ExplorerQuery {
    /// The cells a fold writes for one payload's extraction (cells of equal keys already merged),
    /// given the payload's version, device and OS keys as the store groups them.
    package static func cells(
        _ extraction: ExplorerExtraction, version: String, device: String, os: String
    ) -> [ExplorerCellKey: ExplorerCell] {
        var cells: [ExplorerCellKey: ExplorerCell] = [:]
        for observation in extraction.observations {
            let key = ExplorerCellKey(
                metric: observation.metric, subject: observation.subject, version: version, device: device, os: os,
                appState: observation.appState)
            cells[key, default: ExplorerCell()].add(observation.sample)
        }
        return cells
    }

    /// Rows of `cells` grouped by `groupBy`, keeping the cells whose values are in `filters`
    /// (a dimension absent from `filters` is not filtered).
    ///
    /// App states overlap, so unless `app_state` is grouped by or filtered, only the overall state
    /// (``ExplorerExtractor/overallState``) is read: the figures of a version are never the sum of
    /// its screens. `category` keeps one category's metrics; unknown metric ids are skipped. Rows
    /// come in catalog order, then by subject, version (``VersionOrder``) and the other group keys.
    package static func rows(
        _ cells: some Sequence<(key: ExplorerCellKey, cell: ExplorerCell)>, groupBy: Set<ExplorerDimension> = [],
        filters: [ExplorerDimension: Set<String>] = [:], category: ExplorerCategory? = nil,
        minimumDeviceDays: UInt64 = ExplorerRow.minimumDeviceDays
    ) -> [ExplorerRow] {
        let overallOnly = !groupBy.contains(.appState) && filters[.appState] == nil
        var merged: [ExplorerRowKey: ExplorerCell] = [:]
        for (key, cell) in cells {
            guard let metric = ExplorerCatalog.metric(key.metric), category == nil || metric.category == category
            else { continue }
            if overallOnly, key.appState != ExplorerExtractor.overallState { continue }
            guard filters.allSatisfy({ $0.value.contains(key.value($0.key)) }) else { continue }
            let groups = ExplorerGroupKeys(
                version: groupBy.contains(.version) ? key.version : nil,
                device: groupBy.contains(.device) ? key.device : nil,
                os: groupBy.contains(.os) ? key.os : nil,
                appState: groupBy.contains(.appState) ? key.appState : nil)
            merged[ExplorerRowKey(metric: key.metric, subject: key.subject, groups: groups), default: ExplorerCell()]
                .merge(cell)
        }
        let order = Dictionary(
            ExplorerCatalog.metrics.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let sorted = merged.sorted { a, b in
            let (x, y) = (a.key, b.key)
            if x.metric != y.metric { return order[x.metric, default: .max] < order[y.metric, default: .max] }
            if x.subject != y.subject { return x.subject < y.subject }
            if x.groups.version != y.groups.version {
                return VersionOrder.precedes(x.groups.version ?? "", y.groups.version ?? "")
            }
            let gx = [x.groups.device, x.groups.os, x.groups.appState].map { $0 ?? "" }
            let gy = [y.groups.device, y.groups.os, y.groups.appState].map { $0 ?? "" }
            return gx.lexicographicallyPrecedes(gy)
        }
        return sorted.compactMap { entry in
            guard let metric = ExplorerCatalog.metric(entry.key.metric) else { return nil }
            return ExplorerRow(
                metric: metric, cell: entry.value, groups: entry.key.groups, subject: entry.key.subject,
                minimumDeviceDays: minimumDeviceDays)
        }
    }
}
