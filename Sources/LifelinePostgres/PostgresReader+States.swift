import LifelineAnalysis
import LifelineModel
import PostgresNIO

/// A ``Scope`` filtered or grouped by app state, answered from the per-state rows of iOS 27
/// reports (`payload_states`, `state_exit_counts`, `state_signposts`, `state_buckets`,
/// `diagnostic_states`) joined to their payloads, with the semantics of the SQLite store's
/// `StateQuery`: a device-day counts for a state when its report lists it; exits, signposts and
/// histograms are those observed while the state was active; a diagnostic counts for the states
/// active just before it. States overlap, so rows of several states count an event once per state.
struct PostgresStateQuery {
    var groups: [String] = []
    var condition: String
    var binds = PostgresBindings()
    let dimensions: [GroupDimension]
    let groupsByState: Bool

    /// - Parameters:
    ///   - dims: the alias whose version, OS and device columns are the dimensions (`p` or `d`).
    ///   - kind: the payloads' kind.
    init(_ scope: Scope, dims: String, kind: String) {
        dimensions = scope.groupBy.filter { $0 != .appState }
        groupsByState = scope.groupBy.contains(.appState)
        binds.append(scope.app)
        binds.append(PostgresDay(scope.days.from))
        binds.append(PostgresDay(scope.days.to))
        var parts = [
            "p.app = (SELECT id FROM apps WHERE bundle_id = $1)", "p.kind = '\(kind)'",
            "p.day BETWEEN $2::date AND $3::date",
        ]
        let columns = ["version": "\(dims).app_version", "os": "\(dims).os_version", "device": "\(dims).device_type"]
        for (column, values) in [("version", scope.versions), ("os", scope.oses), ("device", scope.devices)]
        where !values.isEmpty {
            binds.append(values.flatMap { $0 == "unknown" ? [$0, ""] : [$0] })
            parts.append("\(columns[column] ?? column) = ANY($\(binds.count)::text[])")
        }
        if !scope.appStates.isEmpty {
            var domains: [String] = []
            var labels: [String] = []
            for text in scope.appStates {
                guard let slash = text.firstIndex(of: "/") else { continue }
                domains.append(String(text[..<slash]))
                labels.append(String(text[text.index(after: slash)...]))
            }
            binds.append(domains)
            binds.append(labels)
            parts.append(
                """
                x.app_state IN (SELECT v.id FROM app_state_values v
                    JOIN unnest($\(binds.count - 1)::text[], $\(binds.count)::text[]) AS f (d, l)
                    ON v.domain = f.d AND v.label = f.l)
                """)
        }
        condition = parts.joined(separator: " AND ")
        for dimension in dimensions {
            switch dimension {
            case .version: groups.append(columns["version"] ?? "")
            case .os: groups.append(columns["os"] ?? "")
            case .device: groups.append(columns["device"] ?? "")
            case .day: groups.append("p.day::text")
            case .appState: break
            }
        }
        if groupsByState { groups += ["s.domain", "s.label", "s.metadata"] }
    }

    /// `SELECT groups…, keys…, values… FROM payloads p <join> [JOIN app_state_values s] WHERE …
    /// [AND extra] GROUP BY groups…, keys…`.
    func sql(values: [String], join: String, keys: [String] = [], extra: String = "") -> String {
        let stateJoin = groupsByState ? " JOIN app_state_values s ON s.id = x.app_state" : ""
        let grouped = groups + keys
        var sql =
            "SELECT \((grouped + values).joined(separator: ", ")) FROM payloads p \(join)\(stateJoin) "
            + "WHERE \(condition)\(extra)"
        if !grouped.isEmpty { sql += " GROUP BY \(grouped.joined(separator: ", "))" }
        return sql
    }

    /// Columns before the keys.
    var groupCount: Int { groups.count }

    /// The group key of a row whose first columns are the groups.
    func key(_ row: PostgresRandomAccessRow) throws -> GroupKey {
        var key = try PostgresReader.key(row, dimensions: dimensions)
        if groupsByState {
            let first = dimensions.count
            key.appState = ReportedState(
                domain: try row[first].decode(String.self), label: try row[first + 1].decode(String.self),
                metadata: try row[first + 2].decode(String.self))
        }
        return key
    }
}

/// The reader's queries on the per-state rows (see ``PostgresStateQuery``).
extension PostgresReader {
    func stateUsage(_ scope: Scope) async throws -> [UsageRow] {
        let query = PostgresStateQuery(scope, dims: "p", kind: "metric")
        let sql = query.sql(
            values: ["count(DISTINCT p.id)"], join: "JOIN payload_states x ON x.payload = p.id",
            extra: " AND p.device_day")
        return try await rows(sql, query.binds).compactMap { row in
            let row = row.makeRandomAccess()
            let payloads = try row[query.groupCount].decode(Int64.self)
            guard payloads > 0 else { return nil }
            return UsageRow(
                key: try query.key(row), payloads: payloads, foregroundMilliseconds: 0, backgroundMilliseconds: 0)
        }
    }

    func stateExits(_ scope: Scope) async throws -> [ExitRow] {
        let query = PostgresStateQuery(scope, dims: "p", kind: "metric")
        let sql = query.sql(
            values: ["sum(x.count)::bigint"], join: "JOIN state_exit_counts x ON x.payload = p.id",
            keys: ["x.state", "x.reason"])
        let first = query.groupCount
        return try await rows(sql, query.binds).map { row in
            let row = row.makeRandomAccess()
            return try PostgresReader.exitRow(row, key: try query.key(row), first: first)
        }
    }

    func stateSignposts(_ scope: Scope, categories: [String]) async throws -> [SignpostRow] {
        var query = PostgresStateQuery(scope, dims: "p", kind: "metric")
        var extra = ""
        if !categories.isEmpty {
            query.binds.append(categories)
            extra = " AND x.category = ANY($\(query.binds.count)::text[])"
        }
        let sql = query.sql(
            values: ["sum(x.total_count)::bigint"], join: "JOIN state_signposts x ON x.payload = p.id",
            keys: ["x.category", "x.name"], extra: extra)
        let first = query.groupCount
        return try await rows(sql, query.binds).map { row in
            let row = row.makeRandomAccess()
            return try PostgresReader.signpostRow(row, key: try query.key(row), first: first)
        }
    }

    func stateBuckets(_ scope: Scope, source: HistogramSource) async throws -> [BucketRow] {
        var query = PostgresStateQuery(scope, dims: "p", kind: "metric")
        query.binds.append(source.storageKey)
        let sql = query.sql(
            values: ["sum(x.count)::bigint"], join: "JOIN state_buckets x ON x.payload = p.id",
            keys: ["x.bucket_start", "x.bucket_end"], extra: " AND x.source = $\(query.binds.count)")
        let first = query.groupCount
        return try await rows(sql, query.binds).map { row in
            let row = row.makeRandomAccess()
            return try PostgresReader.bucketRow(row, key: try query.key(row), first: first)
        }
    }

    func stateDiagnostics(_ scope: Scope) async throws -> [DiagnosticRow] {
        let query = PostgresStateQuery(scope, dims: "d", kind: "diagnostic")
        let sql = query.sql(
            values: ["count(*)"],
            join:
                "JOIN diagnostics d ON d.day = p.day AND d.payload = p.id "
                + "JOIN diagnostic_states x ON x.day = d.day AND x.diagnostic = d.id",
            keys: ["d.kind", "d.crash_group"])
        let first = query.groupCount
        return try await rows(sql, query.binds).compactMap { row in
            let row = row.makeRandomAccess()
            return try PostgresReader.diagnosticRow(row, key: try query.key(row), first: first)
        }
    }
}
