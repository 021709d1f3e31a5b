import LifelineStorage

extension Database {
    /// The packed blob `column` of a rollup table unpacked: one row per entry, the table's key
    /// columns followed by the entry's three fields — (a, b, count) as integers for `exits` and
    /// `signposts`, (start, end) as reals and count for `buckets`; for the `sources` of
    /// `rollup_bucket_cells`, the source then its buckets' three fields, the rows `buckets` of
    /// `rollup_buckets` gave. For inspection and tests.
    package func rollupEntries(_ table: String, _ column: String) throws(StoreError) -> [[SQLValue]] {
        var keys = try query(
            "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [.text(table)]
        ).compactMap { $0.first?.text }
        if keys == ["id"] {  // a rowid table: its cell is its unique index (migration 0032)
            keys = try query(
                """
                SELECT name FROM pragma_index_info(
                    (SELECT name FROM pragma_index_list(?) WHERE "unique" = 1 AND origin = 'c' LIMIT 1))
                ORDER BY seqno
                """, [.text(table)]
            ).compactMap { $0.first?.text }
        }
        guard !keys.isEmpty, ["exits", "signposts", "buckets", "sources"].contains(column) else {
            throw StoreError(.invalid, "\(table).\(column) is not a packed rollup column")
        }
        var entries: [[SQLValue]] = []
        let list = keys.joined(separator: ", ")
        for row in try query("SELECT \(list), \(column) FROM \(table) ORDER BY \(list)") {
            guard case .blob(let bytes) = row.last else { continue }
            let key = Array(row.dropLast())
            if column == "sources" {
                bytes.withUnsafeBytes { raw in
                    var cursor = BucketCell.Cursor(raw)
                    while let (source, buckets) = cursor.next() {
                        for entry in RollupBlob.decode(buckets, as: BucketEntry.self) {
                            entries.append(
                                key + [.integer(source), .real(entry.start), .real(entry.end), .integer(entry.count)])
                        }
                    }
                }
            } else if column == "buckets" {
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
