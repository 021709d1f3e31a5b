import LifelineAnalysis
import LifelineModel
import LifelineStorage

extension SQLiteRollupReader {
    /// The explorer's cells of `scope`, merged per group, metric, subject and app state: the rows
    /// packed per cell and category (`rollup_explorer`, `rollup_explorer_by_version`, migration
    /// 0016) of the categories of `metrics` (all when empty), with what earlier layouts left until
    /// a refold rewrites it: the fine rows of 0015 (category `''`, every metric of their cell) and
    /// the per-metric version rows of 0014 (`rollup_explorer_by_version_0014`). The version level
    /// answers unless the scope filters or groups by OS or device.
    func explorerCells(_ scope: Scope, metrics: [String]) throws -> [ExplorerCellRow] {
        var plain = scope
        plain.appStates = []
        plain.groupBy = scope.groupBy.filter { $0 == .version || $0 == .os || $0 == .device }
        guard let query = try RollupQuery.make(plain, on: connection) else { return [] }
        var wanted: Set<String>?
        if !metrics.isEmpty {
            let ids = metrics.filter { ExplorerCatalog.metric($0) != nil }
            guard !ids.isEmpty else { return [] }
            wanted = Set(ids)
        }
        // The group's ids (at most version, OS and device; -1 past the grouped ones): no array per row.
        struct Key: Hashable {
            var a: Int64
            var b: Int64
            var c: Int64
            var metric: String
            var subject: String
            var appState: String
            var group: [Int64] { [a, b, c].filter { $0 >= 0 } }
        }
        var merged: [Key: ExplorerCell] = [:]
        let first = query.firstValueColumn
        let connection = connection
        func add(_ cell: ExplorerCell, _ key: Key) throws(StoreError) {
            if let index = merged.index(forKey: key) {
                merged.values[index].merge(cell)
            } else {
                try connection.count(1)
                merged[key] = cell
            }
        }
        func group(_ statement: Statement) -> (Int64, Int64, Int64) {
            (
                first > 0 ? statement.int64(0) : -1, first > 1 ? statement.int64(1) : -1,
                first > 2 ? statement.int64(2) : -1
            )
        }
        func damaged(_ what: String, _ error: any Error) -> StoreError {
            StoreError(.internal, "internal storage error", cause: "undecodable explorer \(what): \(error)")
        }
        // Catalog ids and categories only: letters, digits, `.` and `_` (nothing to escape in JSON).
        func jsonArray(_ values: some Sequence<String>) -> SQLValue {
            .text("[" + values.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "]")
        }

        // The packed rows: the wanted categories' (and 0015's), the wanted metrics decoded, the
        // others skipped by their length.
        var bindings = query.bindings
        var extra = ""
        if let wanted {
            bindings.append(jsonArray(Set(wanted.map { String(ExplorerCatalog.categoryKey(ofMetric: $0)) } + [""])))
            extra =
                " AND category IN (SELECT id FROM explorer_categories WHERE category IN (SELECT value FROM json_each(?\(bindings.count))))"
        }
        let packed = try connection.cached(query.cellsSQL(table: "explorer", column: "app_state, cells", extra: extra))
        defer { packed.reset() }
        try packed.bind(bindings)
        var states = ExplorerNameIDs.states()
        while try packed.step() {
            let (a, b, c) = group(packed)
            // By id since migration 0022 (``ExplorerNameIDs``).
            guard let appState = try states.name(of: packed.int64(first), on: connection) else {
                throw StoreError(
                    .internal, "internal storage error",
                    cause: "explorer row of unknown app state \(packed.int64(first))")
            }
            let before = merged.count
            do {
                try ExplorerCellMap.forEachCell(in: packed.blob(first + 1), only: wanted) {
                    entry, cell throws(SketchDecodingError) in
                    try merged[
                        Key(a: a, b: b, c: c, metric: entry.metric, subject: entry.subject, appState: appState),
                        default: ExplorerCell()
                    ].merge(decoding: cell)
                }
            } catch {
                throw damaged("cells", error)
            }
            try connection.count(merged.count - before)
        }

        if query.level == .byVersion {
            var bindings = query.bindings
            var extra = ""
            if let wanted {
                bindings.append(jsonArray(wanted))
                extra = " AND metric IN (SELECT value FROM json_each(?\(bindings.count)))"
            }
            let sql = query.cellsSQL(
                fromTable: "rollup_explorer_by_version_0014", column: "metric, subject, app_state, cell", extra: extra)
            let legacy = try connection.cached(sql)
            defer { legacy.reset() }
            try legacy.bind(bindings)
            while try legacy.step() {
                let (a, b, c) = group(legacy)
                let key = Key(
                    a: a, b: b, c: c, metric: legacy.text(first), subject: legacy.text(first + 1),
                    appState: legacy.text(first + 2))
                let cell: ExplorerCell
                do {
                    cell = try ExplorerCell(decoding: legacy.blob(first + 3))
                } catch {
                    throw damaged("cell of \(key.metric)", error)
                }
                try add(cell, key)
            }
        }
        var rows: [ExplorerCellRow] = []
        rows.reserveCapacity(merged.count)
        for (key, cell) in merged {
            rows.append(
                ExplorerCellRow(
                    key: try query.key(ids: key.group, names: names, on: connection), metric: key.metric,
                    subject: key.subject, appState: key.appState, cell: cell))
        }
        return rows
    }
}
