extension Database {
    /// The rows of a rollup table with its packed blob (last column) unpacked: one row per entry,
    /// the key columns followed by the entry's three fields — (a, b, count) as integers for
    /// `counts`, (start, end) as reals and count for `buckets`. For inspection and tests.
    package func rollupEntries(_ table: String) throws(StoreError) -> [[SQLValue]] {
        let rows = try query("SELECT * FROM \(table)")
        var entries: [[SQLValue]] = []
        for row in rows {
            guard case .blob(let bytes) = row.last else {
                throw StoreError(.invalid, "\(table) is not a packed rollup table")
            }
            let key = Array(row.dropLast())
            if table.hasPrefix("rollup_buckets") {
                for entry in RollupBlob.decode(bytes, as: BucketEntry.self) {
                    entries.append(key + [.real(entry.start), .real(entry.end), .integer(entry.count)])
                }
            } else {
                for entry in RollupBlob.decode(bytes, as: CountEntry.self) {
                    entries.append(key + [.integer(entry.a), .integer(entry.b), .integer(entry.count)])
                }
            }
        }
        return entries
    }
}
