import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// A ``Scope`` filtered or grouped by app state, answered from the per-state rows of iOS 27
/// reports (`payload_states` with their packed `exits` and `histograms`, `state_signposts`,
/// `diagnostic_states`) joined to their payloads: there are no rollups per state.
///
/// A device-day counts for a state when its report lists that state; exit counts, histograms and
/// signposts are those observed while the state was active; a diagnostic counts for the states
/// active just before it. States overlap (a screen and an experiment arm at once), so summing
/// rows of several states counts an event once per state.
struct StateQuery {
    let query: RollupQuery
    let groupsByState: Bool
    /// JSON array of the `app_state_values` ids of the `app_state` filter, if any.
    let stateFilter: String?

    /// `nil` when the scope matches nothing (as ``RollupQuery/make(_:on:)``, or a state filter
    /// naming no known state).
    static func make(_ scope: Scope, on connection: Connection) throws(StoreError) -> StateQuery? {
        guard let query = try RollupQuery.make(scope, on: connection) else { return nil }
        var filter: String?
        if !scope.appStates.isEmpty {
            var ids = Set<Int64>()
            for text in scope.appStates {
                guard let slash = text.firstIndex(of: "/") else { continue }
                let domain = String(text[..<slash])
                let label = String(text[text.index(after: slash)...])
                for id in try connection.query(
                    "SELECT id FROM app_state_values WHERE domain = ?1 AND label = ?2", [.text(domain), .text(label)],
                    { $0.int64(0) })
                {
                    ids.insert(id)
                }
            }
            guard !ids.isEmpty else { return nil }
            filter = "[" + ids.sorted().map(String.init).joined(separator: ",") + "]"
        }
        return StateQuery(query: query, groupsByState: scope.groupBy.contains(.appState), stateFilter: filter)
    }

    /// `SELECT <groups>, <values> FROM payloads p <join> WHERE …` (the payloads of the app, kind
    /// and days found through `payloads_by_day`, migration 0031) where `dims` is the alias whose
    /// version/OS/device columns decide the dimensions and `stateColumn` the state id column;
    /// `groupBy` appends `GROUP BY <groups>, <keys>`.
    func sql(
        values: [String], join: String, dims: String, stateColumn: String, kind: String = "metric",
        keys: [String] = [], groupBy: Bool = true, extra: String = ""
    ) -> (sql: String, bindings: [SQLValue], groupCount: Int) {
        var groups = query.groups.map { group in
            group.column == "day"
                ? "CAST(julianday(p.day) - 2440587.5 AS INTEGER)" : "coalesce(\(dims).\(group.column), 0)"
        }
        if groupsByState { groups.append(stateColumn) }
        var bindings: [SQLValue] = [.integer(query.app), .text(query.days.from.string), .text(query.days.to.string)]
        var condition = "b.app = ?1 AND b.kind = '\(kind)' AND b.day BETWEEN ?2 AND ?3"
        for filter in query.filters {
            bindings.append(.text(filter.ids))
            condition +=
                " AND coalesce(\(dims).\(filter.column), 0) IN (SELECT value FROM json_each(?\(bindings.count)))"
        }
        if let stateFilter {
            bindings.append(.text(stateFilter))
            condition += " AND \(stateColumn) IN (SELECT value FROM json_each(?\(bindings.count)))"
        }
        var sql =
            "SELECT \((groups + keys + values).joined(separator: ", ")) FROM payloads_by_day b"
            + " JOIN payloads p ON p.id = b.id \(join) WHERE \(condition)\(extra)"
        if groupBy, !(groups + keys).isEmpty {
            let list = (groups + keys).joined(separator: ", ")
            sql += " GROUP BY \(list) ORDER BY \(list)"
        }
        return (sql, bindings, groups.count)
    }

    /// The group key of the first `groupCount` columns of `row`.
    func key(_ row: Statement, groupCount: Int, names: DimensionNames, on connection: Connection) throws(StoreError)
        -> GroupKey
    {
        try key(ids: (0..<groupCount).map { row.int64(Int32($0)) }, names: names, on: connection)
    }

    /// The group key of the group column values `ids` (the state's id last when grouped by state).
    func key(ids: [Int64], names: DimensionNames, on connection: Connection) throws(StoreError) -> GroupKey {
        let dimensionCount = groupsByState ? ids.count - 1 : ids.count
        var key = try query.key(ids: Array(ids.prefix(dimensionCount)), names: names, on: connection)
        if groupsByState, let state = ids.last {
            key.appState = try Self.state(state, on: connection)
        }
        return key
    }

    /// The state of id `id`.
    static func state(_ id: Int64, on connection: Connection) throws(StoreError) -> ReportedState? {
        try connection.first("SELECT domain, label, metadata FROM app_state_values WHERE id = ?1", [.integer(id)]) {
            ReportedState(domain: $0.text(0), label: $0.text(1), metadata: $0.text(2))
        }
    }
}

/// The reader's queries on the per-state rows (see ``StateQuery``).
extension SQLiteRollupReader {
    func stateUsage(_ scope: Scope) throws(StoreError) -> [UsageRow] {
        guard let state = try StateQuery.make(scope, on: connection) else { return [] }
        let (sql, bindings, groups) = state.sql(
            values: ["count(DISTINCT p.id)"], join: "JOIN payload_states x ON x.payload = p.id", dims: "p",
            stateColumn: "x.app_state", extra: " AND p.device_day = 1")
        return try connection.query(sql, bindings) { (row) throws(StoreError) -> UsageRow? in
            guard row.int64(Int32(groups)) > 0 else { return nil }
            return UsageRow(
                key: try state.key(row, groupCount: groups, names: names, on: connection),
                payloads: row.int64(Int32(groups)), foregroundMilliseconds: 0, backgroundMilliseconds: 0)
        }.compactMap { $0 }
    }

    func stateExits(_ scope: Scope) throws(StoreError) -> [ExitRow] {
        guard let state = try StateQuery.make(scope, on: connection) else { return [] }
        let (sql, bindings, groups) = state.sql(
            values: ["x.exits"], join: "JOIN payload_states x ON x.payload = p.id", dims: "p",
            stateColumn: "x.app_state", groupBy: false, extra: " AND x.exits IS NOT NULL")
        var rows: [ExitRow] = []
        for (group, entries) in try packedSums(
            sql, bindings, groupCount: Int32(groups), CountEntry.self, on: connection)
        {
            rows += try exitRows(entries, key: try state.key(ids: group, names: names, on: connection))
        }
        return rows
    }

    func stateSignposts(_ scope: Scope, categories: [String]) throws(StoreError) -> [SignpostRow] {
        guard let state = try StateQuery.make(scope, on: connection) else { return [] }
        var extra = ""
        if !categories.isEmpty {
            let ids = try RollupQuery.ids(categories, .signpostCategory, on: connection).filter { $0 != 0 }
            guard !ids.isEmpty else { return [] }
            extra = " AND x.category IN (\(ids.map(String.init).joined(separator: ",")))"
        }
        let (sql, bindings, groups) = state.sql(
            values: ["sum(x.total_count)"], join: "JOIN state_signposts x ON x.payload = p.id", dims: "p",
            stateColumn: "x.app_state", keys: ["x.category", "x.name"], extra: extra)
        let first = Int32(groups)
        return try connection.query(sql, bindings) { (row) throws(StoreError) -> SignpostRow in
            SignpostRow(
                key: try state.key(row, groupCount: groups, names: names, on: connection),
                category: try names.name(.signpostCategory, row.int64(first), on: connection),
                name: try names.name(.signpostName, row.int64(first + 1), on: connection), count: row.int64(first + 2))
        }
    }

    func stateBuckets(_ scope: Scope, source: HistogramSource) throws(StoreError) -> [BucketRow] {
        guard let state = try StateQuery.make(scope, on: connection) else { return [] }
        guard
            let (join, blob) = try BucketSums.join(
                source, states: "payload_states", signposts: "state_signposts", on: connection)
        else { return [] }
        let (sql, bindings, groups) = state.sql(
            values: [blob], join: join, dims: "p", stateColumn: "x.app_state", groupBy: false)
        return try BucketSums.rows(sql, bindings, groupCount: groups, on: connection) {
            (row) throws(StoreError) -> GroupKey in try state.key(row, groupCount: groups, names: names, on: connection)
        }
    }

    func stateDiagnostics(_ scope: Scope) throws(StoreError) -> [DiagnosticRow] {
        guard let state = try StateQuery.make(scope, on: connection) else { return [] }
        let (sql, bindings, groups) = state.sql(
            values: ["count(*)"],
            join: "JOIN diagnostics d ON d.payload = p.id JOIN diagnostic_states x ON x.diagnostic = d.id", dims: "d",
            stateColumn: "x.app_state", kind: "diagnostic", keys: ["d.kind", "d.crash_group"])
        let first = Int32(groups)
        return try connection.query(sql, bindings) { (row) throws(StoreError) -> DiagnosticRow? in
            guard let kind = DiagnosticKind(rawValue: row.text(first)) else { return nil }
            return DiagnosticRow(
                key: try state.key(row, groupCount: groups, names: names, on: connection), kind: kind,
                crashGroup: row.int64(first + 1), count: row.int64(first + 2))
        }.compactMap { $0 }
    }
}
