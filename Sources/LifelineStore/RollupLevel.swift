/// The two granularities of the rollup tables (see `migrations/0002_rollups.sql`).
enum RollupLevel: CaseIterable, Sendable {
    /// Keyed (app, day, app_version, os_version, device_type): answers every scope.
    case fine
    /// Keyed (app, day, app_version): answers scopes without an OS or device filter or grouping.
    case byVersion

    /// The name of this level's table for `base` (`usage`, `exits`, `signposts`, `buckets`, `diagnostics`).
    func table(_ base: String) -> String {
        self == .fine ? "rollup_\(base)" : "rollup_\(base)_by_version"
    }

    /// The dimension key columns after (app, day).
    var dimensionColumns: [String] {
        self == .fine ? ["app_version", "os_version", "device_type"] : ["app_version"]
    }

    /// Whether this level rolls up histogram buckets (the version level only; see 0002_rollups.sql).
    var hasBuckets: Bool { self == .byVersion }

    /// All tables of this level.
    var tables: [String] {
        (hasBuckets
            ? ["usage", "exits", "signposts", "buckets", "diagnostics"]
            : ["usage", "exits", "signposts", "diagnostics"])
            .map(table)
    }

    /// The coarsest level that can answer a scope with these filters and grouping.
    static func answering(filtersOSOrDevice: Bool, groupsOSOrDevice: Bool) -> RollupLevel {
        filtersOSOrDevice || groupsOSOrDevice ? .fine : .byVersion
    }

    private func upsert(_ base: String, values: [String], sum: String) -> String {
        let key = ["app", "day"] + dimensionColumns
        let columns = key + values
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let conflict = key + values.dropLast(base == "usage" ? 3 : 1)
        return """
            INSERT INTO \(table(base)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (\(conflict.joined(separator: ", "))) DO UPDATE SET \(sum)
            """
    }

    var upsertUsage: String {
        upsert(
            "usage", values: ["payloads", "foreground_ms", "background_ms"],
            sum:
                "payloads = payloads + excluded.payloads, foreground_ms = foreground_ms + excluded.foreground_ms,"
                + " background_ms = background_ms + excluded.background_ms")
    }

    /// Upserts a cell's packed blob (`counts` or `buckets`), merged into the stored one on conflict.
    private func packedUpsert(_ base: String, extraKey: [String] = [], column: String, merge: String) -> String {
        let key = ["app", "day"] + dimensionColumns + extraKey
        let columns = key + [column]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return """
            INSERT INTO \(table(base)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(column) = \(merge)(\(column), excluded.\(column))
            """
    }

    /// Parameters: the cell's key columns, then the packed ``CountEntry`` blob (state, reason, count).
    var upsertExits: String { packedUpsert("exits", column: "counts", merge: "ll_merge_counts") }

    /// Parameters: the cell's key columns, then the packed ``CountEntry`` blob (category, name, count).
    var upsertSignposts: String { packedUpsert("signposts", column: "counts", merge: "ll_merge_counts") }

    /// Parameters: the cell's key columns, the source, then the packed ``BucketEntry`` blob.
    var upsertBuckets: String {
        packedUpsert("buckets", extraKey: ["source"], column: "buckets", merge: "ll_merge_buckets")
    }

    var upsertDiagnostics: String {
        upsert("diagnostics", values: ["kind", "crash_group", "count"], sum: "count = count + excluded.count")
    }
}
