import LifelineAnalysis
import LifelineModel
import LifelineStorage

extension SQLiteRollupReader {
    /// The explorer's cells (`rollup_explorer`, packed per device-day cell, migration 0015, and
    /// `rollup_explorer_by_version`, one row per metric, 0014) of `scope`, merged per group,
    /// metric, subject and app state. The version level answers unless the scope filters or
    /// groups by OS or device.
    func explorerCells(_ scope: Scope, metrics: [String]) throws -> [ExplorerCellRow] {
        var plain = scope
        plain.appStates = []
        plain.groupBy = scope.groupBy.filter { $0 == .version || $0 == .os || $0 == .device }
        guard let query = try RollupQuery.make(plain, on: connection) else { return [] }
        var wanted: Set<String>?
        if !metrics.isEmpty {
            // Catalog ids only: letters, digits, `.` and `_` (nothing to escape in the JSON array).
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
        func damaged(_ what: String, _ error: any Error) -> StoreError {
            StoreError(.internal, "internal storage error", cause: "undecodable explorer \(what): \(error)")
        }
        if query.level == .fine {
            // One row per device-day cell, every metric packed (migration 0015): the wanted
            // metrics' cells are decoded, the others skipped by their length.
            let statement = try connection.cached(query.cellsSQL(table: "explorer", column: "app_state, cells"))
            defer { statement.reset() }
            try statement.bind(query.bindings)
            while try statement.step() {
                let (a, b, c) = (
                    first > 0 ? statement.int64(0) : -1, first > 1 ? statement.int64(1) : -1,
                    first > 2 ? statement.int64(2) : -1
                )
                let appState = statement.text(first)
                let map: ExplorerCellMap
                do {
                    map = try ExplorerCellMap(decoding: statement.blob(first + 1), only: wanted)
                } catch {
                    throw damaged("cells", error)
                }
                for (entry, cell) in map.cells {
                    let key = Key(a: a, b: b, c: c, metric: entry.metric, subject: entry.subject, appState: appState)
                    if merged[key] == nil { try connection.count(1) }
                    merged[key, default: ExplorerCell()].merge(cell)
                }
            }
        } else {
            var bindings = query.bindings
            var extra = ""
            if let wanted {
                bindings.append(.text("[" + wanted.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "]"))
                extra = " AND metric IN (SELECT value FROM json_each(?\(bindings.count)))"
            }
            let sql = query.cellsSQL(table: "explorer", column: "metric, subject, app_state, cell", extra: extra)
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            try statement.bind(bindings)
            while try statement.step() {
                let key = Key(
                    a: first > 0 ? statement.int64(0) : -1, b: first > 1 ? statement.int64(1) : -1,
                    c: first > 2 ? statement.int64(2) : -1, metric: statement.text(first),
                    subject: statement.text(first + 1), appState: statement.text(first + 2))
                let cell: ExplorerCell
                do {
                    cell = try ExplorerCell(decoding: statement.blob(first + 3))
                } catch {
                    throw damaged("cell of \(key.metric)", error)
                }
                if merged[key] == nil { try connection.count(1) }
                merged[key, default: ExplorerCell()].merge(cell)
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
