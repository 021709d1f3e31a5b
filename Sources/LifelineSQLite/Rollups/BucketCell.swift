import CSQLite

/// The histogram buckets of one fine rollup cell, every source in one blob (`rollup_bucket_cells`,
/// migration 0021): for each source in ascending order, its id and the length of its packed bucket
/// list (two LEB128 varints, the id zigzagged), then that list (``RollupBlob``, coarsened to
/// ``RollupBlob/maxBuckets``). A source whose list is empty is left out.
///
/// One row per cell instead of one per cell and source: on a load where every document is its own
/// fine cell, the fold wrote ~19 bucket rows, their keys and B-tree entries per document
/// (BENCHMARKS.md, "Fine histogram buckets packed per cell").
enum BucketCell {
    /// The blob of `sources` (any order; a source's packed list as ``RollupBlob/encode(_:)`` makes it).
    static func encode(_ sources: [(source: Int64, buckets: [UInt8])]) -> [UInt8] {
        let sorted = sources.sorted { $0.source < $1.source }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sorted.reduce(0) { $0 + $1.buckets.count + 4 })
        for (source, buckets) in sorted { append(source, buckets, to: &bytes) }
        return bytes
    }

    /// The sources of a blob in order, read one at a time; ends at the blob's end or at damage.
    struct Cursor {
        let raw: UnsafeRawBufferPointer
        var offset = 0

        init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }

        mutating func next() -> (source: Int64, buckets: UnsafeRawBufferPointer)? {
            guard offset < raw.count, let source = RollupBlob.readVarint(raw, &offset),
                let length = RollupBlob.readVarint(raw, &offset), length <= UInt64(raw.count - offset)
            else {
                offset = raw.count
                return nil
            }
            let start = offset
            offset += Int(length)
            return (RollupBlob.unzigzag(source), UnsafeRawBufferPointer(rebasing: raw[start..<offset]))
        }
    }

    /// The packed bucket list of `source` in a cell's blob (`nil` when the cell has none).
    static func buckets(of source: Int64, in raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var cursor = Cursor(raw)
        while let entry = cursor.next() {
            if entry.source == source { return entry.buckets }
            if entry.source > source { return nil }
        }
        return nil
    }

    /// Two cells' blobs merged: each source's lists merged as `ll_merge_buckets` merges them.
    static func merge(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(x.count + y.count)
        var left = Cursor(x)
        var right = Cursor(y)
        var a = left.next()
        var b = right.next()
        while true {
            switch (a, b) {
            case (nil, nil):
                return bytes
            case (let l?, nil):
                append(l.source, l.buckets, to: &bytes)
                a = left.next()
            case (nil, let r?):
                append(r.source, r.buckets, to: &bytes)
                b = right.next()
            case (let l?, let r?):
                if l.source == r.source {
                    let merged = RollupBlob.mergeBlobs(
                        l.buckets, r.buckets, as: BucketEntry.self, limit: RollupBlob.maxBuckets,
                        finish: RollupBlob.coarsen)
                    append(l.source, merged, to: &bytes)
                    a = left.next()
                    b = right.next()
                } else if l.source < r.source {
                    append(l.source, l.buckets, to: &bytes)
                    a = left.next()
                } else {
                    append(r.source, r.buckets, to: &bytes)
                    b = right.next()
                }
            }
        }
    }

    /// Appends one source: its id, its list's length and the list (left out when it holds no
    /// bucket: a packed list is its layout byte and its entries).
    private static func append(_ source: Int64, _ buckets: some Collection<UInt8>, to bytes: inout [UInt8]) {
        guard buckets.count > 1 else { return }
        RollupBlob.appendVarint(RollupBlob.zigzag(source), to: &bytes)
        RollupBlob.appendVarint(UInt64(buckets.count), to: &bytes)
        bytes.append(contentsOf: buckets)
    }

    /// Registers `ll_merge_bucket_cells(a, b)` (two cells' blobs merged, for the fold's upsert) and
    /// `ll_cell_buckets(cell, source)` (a source's packed list, or NULL, for the reader).
    static func registerFunctions(on handle: OpaquePointer) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let merge = sqlite3_create_function_v2(
            handle, "ll_merge_bucket_cells", 2, flags, nil,
            { context, _, arguments in
                guard let arguments else { return sqlite3_result_null(context) }
                let merged = BucketCell.merge(
                    RollupBlob.argumentBytes(arguments[0]), RollupBlob.argumentBytes(arguments[1]))
                guard !merged.isEmpty else { return sqlite3_result_zeroblob(context, 0) }
                merged.withUnsafeBytes { raw in
                    sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), BucketCell.transient)
                }
            }, nil, nil, nil)
        guard merge == SQLITE_OK else { return merge }
        return sqlite3_create_function_v2(
            handle, "ll_cell_buckets", 2, flags, nil,
            { context, _, arguments in
                guard let arguments,
                    let buckets = BucketCell.buckets(
                        of: sqlite3_value_int64(arguments[1]), in: RollupBlob.argumentBytes(arguments[0]))
                else { return sqlite3_result_null(context) }
                sqlite3_result_blob(context, buckets.baseAddress, Int32(buckets.count), BucketCell.transient)
            }, nil, nil, nil)
    }

    fileprivate static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
