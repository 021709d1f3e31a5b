import Foundation
import LifelineAnalysis
import LifelineModel
import LifelineStorage
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

struct PostgresReader: AggregateReader {
    let connection: PostgresConnection
    let logger: Logger
    /// This node's symbol cache and symbolicator, when symbolication is on.
    let symbols: (cache: URL, symbolicator: Symbolicator)?

    /// Runs `sql` with `binds` and collects its rows. In a bounded read (``ReadBudget/current``) no
    /// statement starts past the deadline (the transaction's `statement_timeout` cuts one that runs
    /// over it), and rows are counted as they arrive: past the budget the read stops reading and
    /// the transaction is rolled back.
    func rows(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        guard let budget = ReadBudget.current else {
            return try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).collect()
        }
        try budget.checkDeadline()
        var rows: [PostgresRow] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            try budget.take()
            rows.append(row)
        }
        return rows
    }

    func apps() async throws -> [AppInfo] {
        try await rows(
            """
            SELECT a.bundle_id, count(p.id) FILTER (WHERE p.kind = 'metric'),
                count(p.id) FILTER (WHERE p.kind = 'diagnostic'), min(p.day)::text, max(p.day)::text
            FROM apps a LEFT JOIN payloads p ON p.app = a.id GROUP BY a.bundle_id ORDER BY a.bundle_id
            """
        ).map { row in
            let (bundle, metric, diagnostic, first, last) = try row.decode(
                (String, Int64, Int64, String?, String?).self)
            return AppInfo(
                bundleID: bundle, metricPayloads: metric, diagnosticPayloads: diagnostic, firstDay: first, lastDay: last
            )
        }
    }

    func hasApp(_ bundleID: String) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(bundleID)
        return try await !rows("SELECT 1 FROM apps WHERE bundle_id = $1", binds).isEmpty
    }

    /// The filter and grouping of `scope` over a rollup table: the key columns (text), the WHERE
    /// clause and its bindings. Dimension values '' are "unknown".
    struct Query {
        var keys: [String] = []
        var condition: String
        var binds = PostgresBindings()
        var dimensions: [GroupDimension]
        /// The version-level tables (`_v`) answer: the scope neither filters nor groups by OS or
        /// device.
        var versionLevel: Bool
        /// The tables folded per OS and device too (`_od`, ``RollupRows/osDeviceTables``) answer:
        /// the scope groups or filters by OS or device, and neither filters nor groups by version.
        var osDeviceLevel: Bool

        /// Nil for a scope about iOS 27 app states: those are answered from the per-state rows
        /// (``PostgresStateQuery``), not the rollups.
        init?(_ scope: Scope) {
            guard !scope.usesAppStates else { return nil }
            dimensions = scope.groupBy
            versionLevel =
                scope.oses.isEmpty && scope.devices.isEmpty
                && !scope.groupBy.contains(.os) && !scope.groupBy.contains(.device)
            osDeviceLevel = !versionLevel && scope.versions.isEmpty && !scope.groupBy.contains(.version)
            binds.append(scope.app)
            binds.append(PostgresDay(scope.days.from))
            binds.append(PostgresDay(scope.days.to))
            var parts = [
                "app = (SELECT id FROM apps WHERE bundle_id = $1)", "day BETWEEN $2::date AND $3::date",
            ]
            for (column, values) in [("version", scope.versions), ("os", scope.oses), ("device", scope.devices)]
            where !values.isEmpty {
                binds.append(values.flatMap { $0 == "unknown" ? [$0, ""] : [$0] })
                parts.append("\(column) = ANY($\(binds.count)::text[])")
            }
            condition = parts.joined(separator: " AND ")
            for dimension in scope.groupBy {
                switch dimension {
                case .version: keys.append("version")
                case .os: keys.append("os")
                case .device: keys.append("device")
                case .day: keys.append("day::text")
                case .appState: break
                }
            }
        }

        /// `SELECT keys…, columns… FROM table WHERE … [AND extra] GROUP BY keys…, groupExtra…`.
        func sql(_ table: String, columns: [String], extraKeys: [String] = [], extra: String? = nil) -> String {
            let groups = keys + extraKeys
            var sql = cellsSQL(table, columns: groups + columns, extra: extra, keyed: false)
            if !groups.isEmpty { sql += " GROUP BY \(groups.joined(separator: ", "))" }
            return sql
        }

        /// `SELECT [keys…,] columns… FROM table WHERE … [AND extra]`, one row per stored row.
        func cellsSQL(_ table: String, columns: [String], extra: String? = nil, keyed: Bool = true) -> String {
            let suffix =
                versionLevel ? "_v" : osDeviceLevel && RollupRows.osDeviceTables.contains(table) ? "_od" : ""
            let table = table + suffix
            let selected = (keyed ? keys : []) + columns
            var sql = "SELECT \(selected.joined(separator: ", ")) FROM \(table) WHERE \(condition)"
            if let extra { sql += " AND \(extra)" }
            return sql
        }

        /// The group key of a row whose first columns are the keys.
        func key(_ row: PostgresRandomAccessRow) throws -> GroupKey {
            try PostgresReader.key(row, dimensions: dimensions)
        }
    }

    /// The group key of a row whose first columns are the text values of `dimensions` (app
    /// states excepted); '' is "unknown".
    static func key(_ row: PostgresRandomAccessRow, dimensions: [GroupDimension]) throws -> GroupKey {
        key(try dimensions.indices.map { try row[$0].decode(String.self) }, dimensions: dimensions)
    }

    /// The group key of the text values of `dimensions` (app states excepted); '' is "unknown".
    static func key(_ texts: [String], dimensions: [GroupDimension]) -> GroupKey {
        var key = GroupKey()
        for (text, dimension) in zip(texts, dimensions) {
            let value = text.isEmpty ? "unknown" : text
            switch dimension {
            case .version: key.version = value
            case .os: key.os = value
            case .device: key.device = value
            case .day: key.day = text
            case .appState: break
            }
        }
        return key
    }

    func usage(_ scope: Scope) async throws -> [UsageRow] {
        guard let query = Query(scope) else { return try await stateUsage(scope) }
        let sql = query.sql(
            "usage_rollup", columns: ["sum(payloads)::bigint", "sum(foreground_ms)", "sum(background_ms)"])
        let first = query.keys.count
        return try await rows(sql, query.binds).compactMap { row in
            let row = row.makeRandomAccess()
            guard let payloads = try row[first].decode(Int64?.self) else { return nil }
            return UsageRow(
                key: try query.key(row), payloads: payloads,
                foregroundMilliseconds: try row[first + 1].decode(Double?.self) ?? 0,
                backgroundMilliseconds: try row[first + 2].decode(Double?.self) ?? 0)
        }
    }

    func exits(_ scope: Scope) async throws -> [ExitRow] {
        guard let query = Query(scope) else { return try await stateExits(scope) }
        let sums: [PackedSum<Int16, String>] = try await packedSums(
            query, table: "exit_cells", arrays: ("states", "reasons"))
        return sums.map {
            ExitRow(key: $0.key, state: $0.first == 0 ? .foreground : .background, reason: $0.second, count: $0.count)
        }
    }

    func signposts(_ scope: Scope, categories: [String]) async throws -> [SignpostRow] {
        guard let query = Query(scope) else { return try await stateSignposts(scope, categories: categories) }
        var extra: String?
        var binds = query.binds
        if !categories.isEmpty {
            binds.append(categories)
            extra = "categories && $\(binds.count)::text[]"
        }
        let wanted = Set(categories)
        let sums: [PackedSum<String, String>] = try await packedSums(
            query, table: "signpost_cells", arrays: ("categories", "names"), extra: extra, binds: binds,
            keep: { category, _ in wanted.isEmpty || wanted.contains(category) })
        return sums.map { SignpostRow(key: $0.key, category: $0.first, name: $0.second, count: $0.count) }
    }

    func buckets(_ scope: Scope, source: HistogramSource) async throws -> [BucketRow] {
        guard let query = Query(scope) else { return try await stateBuckets(scope, source: source) }
        return try await bucketSums(query, source: source.storageKey)
    }

    /// The explorer's cells (`explorer_cells*`, migrations postgres/0014 and 0015) of `scope`, merged
    /// per group, metric, subject and app state (app states are filtered by the caller): the rows
    /// of the wanted metrics' categories, and those written before 0015 (category `''`, every
    /// metric of their cell).
    func explorerCells(_ scope: Scope, metrics: [String]) async throws -> [ExplorerCellRow] {
        var plain = scope
        plain.appStates = []
        plain.groupBy = scope.groupBy.filter { $0 == .version || $0 == .os || $0 == .device }
        guard let query = Query(plain) else { return [] }
        let wanted = Set(metrics)
        let table = query.versionLevel ? "explorer_cells_v" : "explorer_cells"
        let columns = (query.keys + ["app_state", "cells"]).joined(separator: ", ")
        let first = query.keys.count
        var condition = query.condition
        var binds = query.binds
        if !wanted.isEmpty {
            binds.append(Set(wanted.map { String(ExplorerCatalog.categoryKey(ofMetric: $0)) } + [""]).sorted())
            condition += " AND category = ANY($\(binds.count)::text[])"
        }
        struct Key: Hashable {
            var group: GroupKey
            var metric: String
            var subject: String
            var appState: String
        }
        var merged: [Key: ExplorerCell] = [:]
        for row in try await rows("SELECT \(columns) FROM \(table) WHERE \(condition)", binds) {
            let row = row.makeRandomAccess()
            let group = try query.key(row)
            let appState = try row[first].decode(String.self)
            let bytes = try row[first + 1].decode(ByteBuffer.self)
            try ExplorerCellMap.forEachCell(in: bytes.readableBytesView, only: wanted.isEmpty ? nil : wanted) {
                entry, cell throws(SketchDecodingError) in
                try merged[
                    Key(group: group, metric: entry.metric, subject: entry.subject, appState: appState),
                    default: ExplorerCell()
                ].merge(decoding: cell)
            }
        }
        return merged.map {
            ExplorerCellRow(
                key: $0.key.group, metric: $0.key.metric, subject: $0.key.subject, appState: $0.key.appState,
                cell: $0.value)
        }
    }

    func diagnostics(_ scope: Scope) async throws -> [DiagnosticRow] {
        guard let query = Query(scope) else { return try await stateDiagnostics(scope) }
        let sql = query.sql("diagnostic_rollup", columns: ["sum(count)::bigint"], extraKeys: ["kind", "crash_group"])
        let first = query.keys.count
        return try await rows(sql, query.binds).compactMap { row in
            let row = row.makeRandomAccess()
            return try Self.diagnosticRow(row, key: try query.key(row), first: first)
        }
    }

    // The rows of the rollup and per-state queries: the group key's columns, then from `first`
    // the row's own keys and its count.

    static func exitRow(_ row: PostgresRandomAccessRow, key: GroupKey, first: Int) throws -> ExitRow {
        ExitRow(
            key: key, state: try row[first].decode(Int16.self) == 0 ? .foreground : .background,
            reason: try row[first + 1].decode(String.self), count: try row[first + 2].decode(Int64.self))
    }

    static func signpostRow(_ row: PostgresRandomAccessRow, key: GroupKey, first: Int) throws -> SignpostRow {
        SignpostRow(
            key: key, category: try row[first].decode(String.self), name: try row[first + 1].decode(String.self),
            count: try row[first + 2].decode(Int64.self))
    }

    static func bucketRow(_ row: PostgresRandomAccessRow, key: GroupKey, first: Int) throws -> BucketRow {
        BucketRow(
            key: key, start: try row[first].decode(Double.self), end: try row[first + 1].decode(Double.self),
            count: try row[first + 2].decode(Int64.self))
    }

    /// Nil for a kind this version does not know.
    static func diagnosticRow(_ row: PostgresRandomAccessRow, key: GroupKey, first: Int) throws -> DiagnosticRow? {
        guard let kind = DiagnosticKind(rawValue: try row[first].decode(String.self)) else { return nil }
        return DiagnosticRow(
            key: key, kind: kind, crashGroup: try row[first + 1].decode(Int64.self),
            count: try row[first + 2].decode(Int64.self))
    }

    func crashGroups(app: String, ids: [Int64]) async throws -> [CrashGroupInfo] {
        guard !ids.isEmpty else { return [] }
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(Array(Set(ids)).sorted())
        var infos: [CrashGroupInfo] = []
        for row in try await rows(
            """
            SELECT g.id, g.fingerprint, g.group_kind, g.title, g.first_seen, g.last_seen
            FROM crash_groups g JOIN apps a ON a.id = g.app
            WHERE a.bundle_id = $1 AND g.id = ANY($2::bigint[]) ORDER BY g.id
            """, binds)
        {
            let (id, fingerprint, kind, title, first, last) = try row.decode(
                (Int64, String, String, String, Int64, Int64).self)
            var info = CrashGroupInfo(
                id: id, fingerprint: fingerprint, groupKind: kind, title: title, firstSeen: first, lastSeen: last,
                exceptionType: nil, signal: nil, terminationReason: nil, sampleFrames: [])
            var sampleBinds = PostgresBindings()
            sampleBinds.append(id)
            // The most recent diagnostic of the group is its sample.
            if let sample = try await rows(
                """
                SELECT id, exception_type, signal, termination_reason, termination_category, pid, signpost_data,
                    exception_message, day::text
                FROM diagnostics WHERE crash_group = $1 ORDER BY occurred_at DESC, id DESC LIMIT 1
                """, sampleBinds
            ).first {
                let values = try sample.decode(
                    (Int64, Int64?, Int64?, String?, String?, Int64?, String?, String?, String).self)
                (info.exceptionType, info.signal, info.terminationReason) = (values.1, values.2, values.3)
                (info.terminationCategory, info.pid, info.signpostData, info.exceptionMessage) = (
                    values.4, values.5, values.6, values.7
                )
                // The frames are in the diagnostic's day partition.
                var frameBinds = PostgresBindings()
                frameBinds.append(values.8)
                frameBinds.append(values.0)
                info.sampleFrames = try await rows(
                    """
                    SELECT binary_name, binary_uuid, address, "offset" FROM diagnostic_frames
                    WHERE day = $1::date AND diagnostic = $2 ORDER BY position
                    """, frameBinds
                ).map { row in
                    let (name, uuid, address, offset) = try row.decode((String?, String?, Int64, Int64).self)
                    return SampleFrame(
                        binaryName: name, binaryUUID: uuid, address: UInt64(bitPattern: address),
                        offset: UInt64(bitPattern: offset))
                }
                if let symbols {
                    (info.sampleFrames, info.title) = try await symbolicate(
                        info.sampleFrames, title: info.title, with: symbols)
                }
            }
            infos.append(info)
        }
        return infos
    }

    /// The app's own binaries seen in its diagnostics without usable debug symbols (none, or a
    /// slice marked unusable), most frequent first.
    func missingSymbols(app: String, limit: Int) async throws -> [MissingSymbols] {
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(Int64(limit) * 4)
        let rows = try await rows(
            """
            SELECT upper(f.binary_uuid), max(f.binary_name), count(DISTINCT f.diagnostic) AS n
            FROM diagnostic_frames f JOIN diagnostics d ON d.day = f.day AND d.id = f.diagnostic
                JOIN payloads p ON p.id = d.payload
            WHERE p.app = (SELECT id FROM apps WHERE bundle_id = $1) AND f.binary_uuid IS NOT NULL
                AND upper(f.binary_uuid) NOT IN (SELECT uuid FROM debug_symbols WHERE unusable_reason IS NULL)
            GROUP BY upper(f.binary_uuid) ORDER BY n DESC, 1 LIMIT $2
            """, binds
        ).map { row in
            let (uuid, name, count) = try row.decode((String, String?, Int64).self)
            return MissingSymbols(uuid: uuid, binaryName: name, diagnostics: count)
        }
        return MissingSymbols.appBinaries(rows, limit: limit)
    }
}
