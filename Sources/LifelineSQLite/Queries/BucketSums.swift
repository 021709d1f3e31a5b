import LifelineAnalysis
import LifelineStorage

/// Histogram buckets merged from the packed blobs of normalized rows (the reader's fallback when
/// no rollup answers: OS/device scopes, app states).
enum BucketSums {
    private struct Bound: Hashable {
        var group: [Int64]
        var start: Double
        var end: Double
    }

    /// Runs `sql` (the group columns first, then one packed histogram), sums the buckets per group
    /// and identical bounds, and returns the rows by group, then bounds. `key` names the group of
    /// the current row; it is asked once per group.
    static func rows(
        _ sql: String, _ bindings: [SQLValue], groupCount: Int, on connection: Connection,
        key: (Statement) throws(StoreError) -> GroupKey
    ) throws(StoreError) -> [BucketRow] {
        var sums: [Bound: Int64] = [:]
        var keys: [[Int64]: GroupKey] = [:]
        let statement = try Statement(database: connection.handle, sql: sql, persistent: false)
        try statement.bind(bindings)
        let blobColumn = Int32(groupCount)
        while try statement.step() {
            let group = (0..<blobColumn).map { statement.int64($0) }
            if keys[group] == nil { keys[group] = try key(statement) }
            for bucket in try HistogramCodec.decode(statement.blob(blobColumn)) where bucket.count > 0 {
                guard let start = bucket.start ?? bucket.end, let end = bucket.end ?? bucket.start,
                    start.isFinite, end.isFinite
                else { continue }
                let bound = Bound(group: group, start: start, end: end)
                if let sum = sums[bound] {
                    sums[bound] = sum.addingSaturating(bucket.count)
                } else {
                    try connection.count()  // a new row the read holds
                    sums[bound] = bucket.count
                }
            }
        }
        return sums.sorted { a, b in
            a.key.group != b.key.group
                ? a.key.group.lexicographicallyPrecedes(b.key.group)
                : (a.key.start, a.key.end) < (b.key.start, b.key.end)
        }.map {
            BucketRow(key: keys[$0.key.group] ?? GroupKey(), start: $0.key.start, end: $0.key.end, count: $0.value)
        }
    }

    /// The join of `payloads p` to the rows holding `source`'s histograms (a metric's packed in
    /// the `histograms` column of `states`, migration 0030: taken by `ll_cell_buckets`; `signposts`
    /// for signpost durations, a table keyed like `state_signposts`) and the blob expression; nil
    /// when the source's names were never stored. The ids are integers read from the lookups,
    /// written into the SQL.
    static func join(
        _ source: HistogramSource, states: String, signposts: String, on connection: Connection
    ) throws(StoreError) -> (join: String, blob: String)? {
        switch source {
        case .metric(let name):
            guard let id = try connection.first(Dimension.metricName.selectSQL, [.text(name)], { $0.int64(0) }) else {
                return nil
            }
            let blob = "ll_cell_buckets(x.histograms, \(id))"
            return ("JOIN \(states) x ON x.payload = p.id AND \(blob) IS NOT NULL", blob)
        case .signpost(let categoryName, let signpostName):
            guard
                let category = try connection.first(
                    Dimension.signpostCategory.selectSQL, [.text(categoryName)], { $0.int64(0) }),
                let name = try connection.first(
                    Dimension.signpostName.selectSQL, [.text(signpostName)], { $0.int64(0) })
            else { return nil }
            return (
                "JOIN \(signposts) x ON x.payload = p.id AND x.category = \(category) AND x.name = \(name) "
                    + "AND x.durations IS NOT NULL",
                "x.durations"
            )
        }
    }
}
