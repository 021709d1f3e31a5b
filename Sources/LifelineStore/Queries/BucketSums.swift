import LifelineAnalysis

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
                sums[Bound(group: group, start: start, end: end), default: 0].addSaturating(bucket.count)
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
}
