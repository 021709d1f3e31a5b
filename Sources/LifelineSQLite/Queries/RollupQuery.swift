import LifelineModel
import LifelineAnalysis
import LifelineStorage

/// A ``Scope`` translated for the rollup tables: the coarsest level that can answer it, the
/// WHERE clause with its bindings (string filters mapped to lookup ids), and the grouping columns.
struct RollupQuery {
    let level: RollupLevel
    /// Grouped dimensions with their column, in a fixed order (version, os, device, day).
    let groups: [(dimension: GroupDimension, column: String)]
    /// `app = ?1 AND day BETWEEN ?2 AND ?3 …`, without `WHERE`.
    let condition: String
    let bindings: [SQLValue]
    /// `apps.id` and the inclusive day range.
    let app: Int64
    let days: DayRange
    /// Dimension filters as (column, JSON array of ids), for queries on the normalized rows.
    let filters: [(column: String, ids: String)]

    /// `nil` when the scope matches nothing (unknown app, a filter with no known value, or a window
    /// that ends before the retention horizon).
    static func make(_ scope: Scope, on connection: Connection) throws(StoreError) -> RollupQuery? {
        guard
            let app = try connection.first(
                "SELECT id FROM apps WHERE bundle_id = ?", [.text(scope.app)], { $0.int64(0) })
        else { return nil }
        // Days before the retention horizon answer as if nothing had been stored, also while
        // the pruner is still deleting them (see Pruner).
        var days = scope.days
        if let horizon = try Pruner.horizon("data", on: connection), horizon > days.from.ordinal {
            guard horizon <= days.to.ordinal, let first = UTCDay(ordinal: horizon) else { return nil }
            days.from = first
        }
        let grouped = Set(scope.groupBy)
        let level = RollupLevel.answering(
            filtersOSOrDevice: !scope.oses.isEmpty || !scope.devices.isEmpty,
            groupsOSOrDevice: grouped.contains(.os) || grouped.contains(.device))
        var condition = "app = ?1 AND day BETWEEN ?2 AND ?3"
        var bindings: [SQLValue] = [
            .integer(app), .integer(Int64(days.from.ordinal)), .integer(Int64(days.to.ordinal)),
        ]
        var filters: [(column: String, ids: String)] = []
        for (values, dimension, column) in [
            (scope.versions, Dimension.appVersion, "app_version"), (scope.oses, .osVersion, "os_version"),
            (scope.devices, .deviceType, "device_type"),
        ] where !values.isEmpty {
            let ids = try Self.ids(values, dimension, on: connection)
            guard !ids.isEmpty else { return nil }
            let json = "[" + ids.map(String.init).joined(separator: ",") + "]"
            filters.append((column, json))
            bindings.append(.text(json))
            condition += " AND \(column) IN (SELECT value FROM json_each(?\(bindings.count)))"
        }
        let columns: [(GroupDimension, String)] = [
            (.version, "app_version"), (.os, "os_version"), (.device, "device_type"), (.day, "day"),
        ]
        return RollupQuery(
            level: level, groups: columns.filter { grouped.contains($0.0) }, condition: condition, bindings: bindings,
            app: app, days: days, filters: filters)
    }

    /// The ids of `values` in `dimension`; `unknown` also stands for id 0 (no value in the payload).
    static func ids(_ values: [String], _ dimension: Dimension, on connection: Connection) throws(StoreError) -> [Int64]
    {
        var ids = Set<Int64>()
        for value in values {
            if value == "unknown" { ids.insert(0) }
            if let id = try connection.first(dimension.selectSQL, [.text(value)], { $0.int64(0) }) { ids.insert(id) }
        }
        return ids.sorted()
    }

    /// `SELECT <groups>, <keys>, <sums> FROM <table> WHERE … GROUP BY <groups>, <keys>`, plus `extra` conditions.
    func sql(table base: String, keys: [String], sums: [String], extra: String = "") -> String {
        let groupColumns = groups.map(\.column)
        let select = (groupColumns + keys + sums).joined(separator: ", ")
        let groupBy = groupColumns + keys
        var sql = "SELECT \(select) FROM \(level.table(base)) WHERE \(condition)\(extra)"
        if !groupBy.isEmpty {
            let list = groupBy.joined(separator: ", ")
            sql += " GROUP BY \(list) ORDER BY \(list)"
        }
        return sql
    }

    /// `SELECT <groups>, <column> FROM <table> WHERE …` for a packed table: one row per cell, summed
    /// by the caller after decoding (see ``RollupBlob``), plus `extra` conditions.
    func cellsSQL(table base: String, column: String, extra: String = "") -> String {
        cellsSQL(fromTable: level.table(base), column: column, extra: extra)
    }

    /// The same from the table named `table` (one of this level's, under another name).
    func cellsSQL(fromTable table: String, column: String, extra: String = "") -> String {
        let select = (groups.map(\.column) + [column]).joined(separator: ", ")
        return "SELECT \(select) FROM \(table) WHERE \(condition)\(extra)"
    }

    /// The group key of a row whose first columns are ``groups``.
    func key(_ row: Statement, names: DimensionNames, on connection: Connection) throws(StoreError) -> GroupKey {
        try key(ids: (0..<groups.count).map { row.int64(Int32($0)) }, names: names, on: connection)
    }

    /// The group key of the ids of ``groups``, in order.
    func key(ids: [Int64], names: DimensionNames, on connection: Connection) throws(StoreError) -> GroupKey {
        var key = GroupKey()
        for (group, id) in zip(groups, ids) {
            switch group.dimension {
            case .version: key.version = try names.name(.appVersion, id, on: connection)
            case .os: key.os = try names.name(.osVersion, id, on: connection)
            case .device: key.device = try names.name(.deviceType, id, on: connection)
            case .day: key.day = UTCDay(epochSeconds: id * 86_400).string
            case .appState: break  // not a rollup column: StateQuery sets it
            }
        }
        return key
    }

    /// Index of the first column after the group columns.
    var firstValueColumn: Int32 { Int32(groups.count) }
}
