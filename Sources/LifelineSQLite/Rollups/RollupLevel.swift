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
    var tables: [String] { [table("metrics"), bucketTable, table("diagnostics")] }

    /// This level's histogram buckets: the version level's one row per (cell, source)
    /// (`rollup_buckets_by_version`), the fine level's one row per cell holding all its sources
    /// (`rollup_bucket_cells`, ``BucketCell``, migration 0021; `rollup_buckets` before it).
    var bucketTable: String { self == .fine ? "rollup_bucket_cells" : table("buckets") }

    /// The explorer's packed rows at this level (`rollup_explorer`, `rollup_explorer_by_version`,
    /// migration 0016). Parameters: the cell's key columns, app state, category, then the encoded
    /// ``ExplorerCellMap`` of that category's metrics, merged into the stored one on conflict
    /// (`ll_merge_explorer_map`).
    var upsertExplorer: String {
        let key = ["app", "day"] + dimensionColumns + ["app_state", "category"]
        let placeholders = Array(repeating: "?", count: key.count + 1).joined(separator: ", ")
        return """
            INSERT INTO \(table("explorer")) (\(key.joined(separator: ", ")), cells) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET cells = ll_merge_explorer_map(cells, excluded.cells)
            """
    }

    /// The explorer row of a key (``upsertExplorer``'s key parameters): its stored cells.
    var selectExplorer: String {
        let key = ["app", "day"] + dimensionColumns + ["app_state", "category"]
        return "SELECT cells FROM \(table("explorer")) WHERE " + key.map { "\($0) = ?" }.joined(separator: " AND ")
    }

    /// Writes an explorer row's cells as they are (already merged with the stored ones).
    var replaceExplorer: String {
        let key = ["app", "day"] + dimensionColumns + ["app_state", "category"]
        let placeholders = Array(repeating: "?", count: key.count + 1).joined(separator: ", ")
        return """
            INSERT INTO \(table("explorer")) (\(key.joined(separator: ", ")), cells) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET cells = excluded.cells
            """
    }

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
    /// merged into the stored one on conflict. The version level's bucket rows; at the fine level,
    /// the rows of `rollup_buckets`, which only migration 0012's rebuild writes (0021 packs them).
    var upsertBuckets: String {
        let key = ["app", "day"] + dimensionColumns + ["source"]
        let placeholders = Array(repeating: "?", count: key.count + 1).joined(separator: ", ")
        return """
            INSERT INTO \(table("buckets")) (\(key.joined(separator: ", ")), buckets) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET buckets = ll_merge_buckets(buckets, excluded.buckets)
            """
    }

    /// The fine level's bucket cells (`rollup_bucket_cells`). Parameters: the cell's key columns,
    /// then its ``BucketCell`` blob, merged into the stored one on conflict.
    static let upsertBucketCells = """
        INSERT INTO rollup_bucket_cells (app, day, app_version, os_version, device_type, sources)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (app, day, app_version, os_version, device_type)
        DO UPDATE SET sources = ll_merge_bucket_cells(sources, excluded.sources)
        """

    var upsertDiagnostics: String {
        upsert("diagnostics", values: ["kind", "crash_group", "count"], sum: "count = count + excluded.count")
    }
}
