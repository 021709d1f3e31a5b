import LifelineAnalysis
import LifelineModel
import LifelineStorage

extension SQLiteRollupReader {
    /// The explorer's cells (`rollup_explorer*`, migration 0014) of `scope`, merged per group,
    /// metric, subject and app state. The version level answers unless the scope filters or
    /// groups by OS or device.
    func explorerCells(_ scope: Scope, metrics: [String]) throws -> [ExplorerCellRow] {
        var plain = scope
        plain.appStates = []
        plain.groupBy = scope.groupBy.filter { $0 == .version || $0 == .os || $0 == .device }
        guard let query = try RollupQuery.make(plain, on: connection) else { return [] }
        var bindings = query.bindings
        var extra = ""
        if !metrics.isEmpty {
            // Catalog ids only: letters, digits, `.` and `_` (nothing to escape in the JSON array).
            let ids = metrics.filter { ExplorerCatalog.metric($0) != nil }
            guard !ids.isEmpty else { return [] }
            bindings.append(.text("[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]"))
            extra = " AND metric IN (SELECT value FROM json_each(?\(bindings.count)))"
        }
        let sql = query.cellsSQL(table: "explorer", column: "metric, subject, app_state, cell", extra: extra)
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
        let statement = try connection.cached(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        let first = query.firstValueColumn
        var merged: [Key: ExplorerCell] = [:]
        while try statement.step() {
            let key = Key(
                a: first > 0 ? statement.int64(0) : -1, b: first > 1 ? statement.int64(1) : -1,
                c: first > 2 ? statement.int64(2) : -1, metric: statement.text(first),
                subject: statement.text(first + 1), appState: statement.text(first + 2))
            let cell: ExplorerCell
            do {
                cell = try ExplorerCell(decoding: statement.blob(first + 3))
            } catch {
                throw StoreError(
                    .internal, "internal storage error", cause: "undecodable explorer cell of \(key.metric): \(error)")
            }
            if merged[key] == nil { try connection.count(1) }
            merged[key, default: ExplorerCell()].merge(cell)
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
