/// The two granularities of the rollup tables (see `migrations/0002_rollups.sql`).
enum RollupLevel: CaseIterable, Sendable {
    /// Keyed (app, day, app_version, os_version, device_type): answers every scope.
    case fine
    /// Keyed (app, day, app_version): answers scopes without an OS or device filter or grouping.
    case byVersion

    /// The name of this level's table for `base` (`metrics`, `buckets`, `diagnostics`).
    func table(_ base: String) -> String {
        self == .fine ? "rollup_\(base)" : "rollup_\(base)_by_version"
    }

    /// The dimension key columns after (app, day).
    var dimensionColumns: [String] {
        self == .fine ? ["app_version", "os_version", "device_type"] : ["app_version"]
    }

    /// All tables of this level (both roll up histogram buckets since migration 0012). The
    /// explorer's cells (migration 0014) are not among them: they are folded from the documents
    /// only, never rebuilt from the normalized rows.
    var tables: [String] { ["metrics", "buckets", "diagnostics"].map(table) }

    /// The explorer's packed rows at this level (`rollup_explorer`, `rollup_explorer_by_version`,
    /// migration 0016), keyed by ``explorerKey``: a key may hold several rows (``ExplorerStage``).
    /// Parameters: the key's columns, then the encoded ``ExplorerCellMap`` of its category's metrics.
    var insertExplorer: String {
        let placeholders = Array(repeating: "?", count: explorerKey.count + 1).joined(separator: ", ")
        return
            "INSERT INTO \(table("explorer")) (\(explorerKey.joined(separator: ", ")), cells) VALUES (\(placeholders))"
    }

    /// The cells of every row of one key. Parameters: the key's columns.
    var selectExplorerRows: String {
        "SELECT cells FROM \(table("explorer")) WHERE \(explorerKey.map { "\($0) = ?" }.joined(separator: " AND "))"
    }

    /// Deletes every row of one key. Parameters: the key's columns.
    var deleteExplorerRows: String {
        "DELETE FROM \(table("explorer")) WHERE \(explorerKey.map { "\($0) = ?" }.joined(separator: " AND "))"
    }

    /// The key columns of the explorer's rows at this level: the cell's, app state, category.
    private var explorerKey: [String] { ["app", "day"] + dimensionColumns + ["app_state", "category"] }

    /// The coarsest level that can answer a scope with these filters and grouping.
    static func answering(filtersOSOrDevice: Bool, groupsOSOrDevice: Bool) -> RollupLevel {
        filtersOSOrDevice || groupsOSOrDevice ? .fine : .byVersion
    }

    private func upsert(_ base: String, values: [String], sum: String) -> String {
        let key = ["app", "day"] + dimensionColumns
        let columns = key + values
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let conflict = key + values.dropLast()
        return """
            INSERT INTO \(table(base)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (\(conflict.joined(separator: ", "))) DO UPDATE SET \(sum)
            """
    }

    /// Parameters: the cell's key columns, payloads, foreground_ms, background_ms, then the packed
    /// ``CountEntry`` blobs of exits (state, reason, count) and signposts (category, name, count),
    /// added to / merged into the stored cell on conflict.
    var upsertMetrics: String {
        let key = ["app", "day"] + dimensionColumns
        let columns = key + ["payloads", "foreground_ms", "background_ms", "exits", "signposts"]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return """
            INSERT INTO \(table("metrics")) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET payloads = payloads + excluded.payloads,
                foreground_ms = foreground_ms + excluded.foreground_ms,
                background_ms = background_ms + excluded.background_ms,
                exits = ll_merge_counts(exits, excluded.exits),
                signposts = ll_merge_counts(signposts, excluded.signposts)
            """
    }

    /// Parameters: the cell's key columns, the source, then the packed ``BucketEntry`` blob,
    /// merged into the stored one on conflict.
    var upsertBuckets: String {
        let key = ["app", "day"] + dimensionColumns + ["source"]
        let placeholders = Array(repeating: "?", count: key.count + 1).joined(separator: ", ")
        return """
            INSERT INTO \(table("buckets")) (\(key.joined(separator: ", ")), buckets) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET buckets = ll_merge_buckets(buckets, excluded.buckets)
            """
    }

    var upsertDiagnostics: String {
        upsert("diagnostics", values: ["kind", "crash_group", "count"], sum: "count = count + excluded.count")
    }
}
