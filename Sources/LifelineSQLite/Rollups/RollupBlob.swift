import CSQLite
import LifelineModel

/// One entry of a packed rollup blob: a key of two words and a count (see
/// `migrations/0004_packed_rollups.sql` and ``RollupBlob`` for the two encodings).
protocol PackedEntry: Equatable {
    init(words: (UInt64, UInt64, UInt64))
    var words: (UInt64, UInt64, UInt64) { get }
    /// The entry as three integers whose first one ascends with the key order, or `nil` when it
    /// has none (a bucket bound with a fraction): what the compact encoding stores.
    var integers: (Int64, Int64, Int64)? { get }
    init(integers: (Int64, Int64, Int64))
    var count: Int64 { get set }
    /// Orders entries by key; entries with equal keys are merged.
    static func keyPrecedes(_ lhs: Self, _ rhs: Self) -> Bool
    static func sameKey(_ lhs: Self, _ rhs: Self) -> Bool
}

/// An exit counter (state, reason) or a signpost total (category, name) of a rollup cell.
struct CountEntry: PackedEntry, Hashable {
    var a: Int64
    var b: Int64
    var count: Int64

    init(a: Int64, b: Int64, count: Int64) {
        self.a = a
        self.b = b
        self.count = count
    }

    init(words: (UInt64, UInt64, UInt64)) {
        self.init(a: Int64(bitPattern: words.0), b: Int64(bitPattern: words.1), count: Int64(bitPattern: words.2))
    }

    var words: (UInt64, UInt64, UInt64) { (UInt64(bitPattern: a), UInt64(bitPattern: b), UInt64(bitPattern: count)) }

    var integers: (Int64, Int64, Int64)? { (a, b, count) }

    init(integers: (Int64, Int64, Int64)) { self.init(a: integers.0, b: integers.1, count: integers.2) }

    static func keyPrecedes(_ lhs: Self, _ rhs: Self) -> Bool { (lhs.a, lhs.b) < (rhs.a, rhs.b) }
    static func sameKey(_ lhs: Self, _ rhs: Self) -> Bool { lhs.a == rhs.a && lhs.b == rhs.b }
}

/// A histogram bucket of a rollup cell: bounds in the histogram's canonical unit and its samples.
struct BucketEntry: PackedEntry, Hashable {
    var start: Double
    var end: Double
    var count: Int64

    init(start: Double, end: Double, count: Int64) {
        self.start = start
        self.end = end
        self.count = count
    }

    init(words: (UInt64, UInt64, UInt64)) {
        self.init(
            start: Double(bitPattern: words.0), end: Double(bitPattern: words.1), count: Int64(bitPattern: words.2))
    }

    var words: (UInt64, UInt64, UInt64) { (start.bitPattern, end.bitPattern, UInt64(bitPattern: count)) }

    /// (start, end − start, count) when both bounds are whole numbers within ±2⁵³ and end ≥ start
    /// (MetricKit's millisecond bounds are).
    var integers: (Int64, Int64, Int64)? {
        let limit = 9_007_199_254_740_992.0
        guard start.rounded() == start, end.rounded() == end, abs(start) <= limit, abs(end) <= limit, end >= start
        else { return nil }
        return (Int64(start), Int64(end) - Int64(start), count)
    }

    init(integers: (Int64, Int64, Int64)) {
        self.init(start: Double(integers.0), end: Double(integers.0 &+ integers.1), count: integers.2)
    }

    static func keyPrecedes(_ lhs: Self, _ rhs: Self) -> Bool { (lhs.start, lhs.end) < (rhs.start, rhs.end) }
    static func sameKey(_ lhs: Self, _ rhs: Self) -> Bool { lhs.start == rhs.start && lhs.end == rhs.end }
}

/// Encoding, decoding and merging of packed rollup blobs, and the SQL functions that merge them
/// inside an upsert (`ll_merge_counts`, `ll_merge_buckets`).
enum RollupBlob {
    /// Bytes of one entry in the ``Layout/words`` layout.
    static let entryBytes = 24
    /// The most buckets one (version cell, source) keeps; see ``coarsen(_:)``.
    static let maxBuckets = 128

    /// Sorts `entries` by key and sums the counts of equal keys.
    static func normalize<Entry: PackedEntry>(_ entries: [Entry]) -> [Entry] {
        var sorted = entries.sorted(by: Entry.keyPrecedes)
        var write = 0
        for read in sorted.indices {
            if write > 0, Entry.sameKey(sorted[write - 1], sorted[read]) {
                sorted[write - 1].count.addSaturating(sorted[read].count)
            } else {
                sorted[write] = sorted[read]
                write += 1
            }
        }
        sorted.removeSubrange(write...)
        return sorted
    }

    /// Merges two normalized entry lists into one (a linear merge; equal keys are summed).
    static func merge<Entry: PackedEntry>(_ x: [Entry], _ y: [Entry]) -> [Entry] {
        var merged: [Entry] = []
        merged.reserveCapacity(x.count + y.count)
        var i = 0
        var j = 0
        while i < x.count, j < y.count {
            if Entry.sameKey(x[i], y[j]) {
                var entry = x[i]
                entry.count.addSaturating(y[j].count)
                merged.append(entry)
                i += 1
                j += 1
            } else if Entry.keyPrecedes(x[i], y[j]) {
                merged.append(x[i])
                i += 1
            } else {
                merged.append(y[j])
                j += 1
            }
        }
        merged.append(contentsOf: x[i...])
        merged.append(contentsOf: y[j...])
        return merged
    }

    /// Halves a bucket list longer than ``maxBuckets`` until it fits, by merging neighbours
    /// (start of the first, the larger end, summed count): sample counts stay exact, bounds widen.
    /// Only payloads that do not share bucket layouts get here (MetricKit's layouts are fixed).
    static func coarsen(_ buckets: [BucketEntry]) -> [BucketEntry] {
        var buckets = buckets
        while buckets.count > maxBuckets {
            var halved: [BucketEntry] = []
            halved.reserveCapacity(buckets.count / 2 + 1)
            var index = 0
            while index < buckets.count {
                var entry = buckets[index]
                if index + 1 < buckets.count {
                    let next = buckets[index + 1]
                    entry.end = max(entry.end, next.end)
                    entry.count.addSaturating(next.count)
                }
                halved.append(entry)
                index += 2
            }
            buckets = normalize(halved)
        }
        return buckets
    }

    /// Blob layouts, told apart by the first byte.
    enum Layout: UInt8 {
        /// Three little-endian 8-byte words per entry (``PackedEntry/words``).
        case words = 0
        /// Three zigzag LEB128 varints per entry (``PackedEntry/integers``), the first as the
        /// difference from the previous entry's: ~4 bytes an entry instead of 24.
        case varints = 1
    }

    /// The blob of normalized `entries`: varints when every entry has integers, else words.
    static func encode<Entry: PackedEntry>(_ entries: [Entry]) -> [UInt8] {
        var bytes: [UInt8] = [Layout.varints.rawValue]
        bytes.reserveCapacity(1 + entries.count * 5)
        var previous: Int64 = 0
        for entry in entries {
            guard let integers = entry.integers else { return encodeWords(entries) }
            appendVarints(integers, after: &previous, to: &bytes)
        }
        return bytes
    }

    /// The varint entries of a blob, read one at a time (``decode(_:as:)`` collects them; a
    /// streamed merge reads two at once): ends at the blob's end or at damage.
    struct VarintCursor {
        let raw: UnsafeRawBufferPointer
        var offset = 1
        var previous: Int64 = 0

        /// `nil` unless `raw` is empty or holds the varint layout.
        init?(_ raw: UnsafeRawBufferPointer) {
            self.raw = raw
            guard let first = raw.first else { return }
            guard first == Layout.varints.rawValue else { return nil }
        }

        mutating func next() -> (Int64, Int64, Int64)? {
            guard offset < raw.count, let delta = readVarint(raw, &offset), let second = readVarint(raw, &offset),
                let third = readVarint(raw, &offset)
            else {
                offset = raw.count
                return nil
            }
            previous = previous &+ unzigzag(delta)
            return (previous, unzigzag(second), unzigzag(third))
        }
    }

    /// The merge of two varint blobs of normalized entries (keys ordered as their first two
    /// integers), streamed from one to the other without decoding either into an array: the bytes
    /// `encode(merge(decode(x), decode(y)))` gives. `nil` when either blob has the words layout or
    /// the merge holds more than `limit` entries (the caller merges the entries, and coarsens).
    static func mergePacked(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer, limit: Int) -> [UInt8]? {
        guard var left = VarintCursor(x), var right = VarintCursor(y) else { return nil }
        var bytes: [UInt8] = [Layout.varints.rawValue]
        bytes.reserveCapacity(x.count + y.count)
        var previous: Int64 = 0
        var written = 0
        var a = left.next()
        var b = right.next()
        while true {
            let entry: (Int64, Int64, Int64)
            switch (a, b) {
            case (nil, nil):
                return bytes
            case (let l?, nil):
                entry = l
                a = left.next()
            case (nil, let r?):
                entry = r
                b = right.next()
            case (let l?, let r?):
                if l.0 == r.0, l.1 == r.1 {
                    var count = l.2
                    count.addSaturating(r.2)
                    entry = (l.0, l.1, count)
                    a = left.next()
                    b = right.next()
                } else if (l.0, l.1) < (r.0, r.1) {
                    entry = l
                    a = left.next()
                } else {
                    entry = r
                    b = right.next()
                }
            }
            written += 1
            guard written <= limit else { return nil }
            appendVarints(entry, after: &previous, to: &bytes)
        }
    }

    /// Appends one entry of the varint layout: its first integer as the difference from the
    /// entry before (`previous`, then moved to it), all three zigzagged.
    private static func appendVarints(
        _ entry: (Int64, Int64, Int64), after previous: inout Int64, to bytes: inout [UInt8]
    ) {
        appendVarint(zigzag(entry.0 &- previous), to: &bytes)
        appendVarint(zigzag(entry.1), to: &bytes)
        appendVarint(zigzag(entry.2), to: &bytes)
        previous = entry.0
    }

    /// Two packed lists merged: streamed when both are varints and the merge holds at most `limit`
    /// entries (``mergePacked(_:_:limit:)``), else decoded, merged, `finish`ed (coarsened) and
    /// encoded. The fold's version-level cache and the SQL merge functions both merge this way.
    static func mergeBlobs<Entry: PackedEntry>(
        _ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer, as _: Entry.Type, limit: Int = .max,
        finish: ([Entry]) -> [Entry] = { $0 }
    ) -> [UInt8] {
        if let streamed = mergePacked(x, y, limit: limit) { return streamed }
        return encode(finish(merge(decode(x, as: Entry.self), decode(y, as: Entry.self))))
    }

    private static func encodeWords<Entry: PackedEntry>(_ entries: [Entry]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 1 + entries.count * entryBytes)
        bytes[0] = Layout.words.rawValue
        bytes.withUnsafeMutableBytes { raw in
            for (index, entry) in entries.enumerated() {
                let words = entry.words
                let offset = 1 + index * entryBytes
                raw.storeBytes(of: words.0.littleEndian, toByteOffset: offset, as: UInt64.self)
                raw.storeBytes(of: words.1.littleEndian, toByteOffset: offset + 8, as: UInt64.self)
                raw.storeBytes(of: words.2.littleEndian, toByteOffset: offset + 16, as: UInt64.self)
            }
        }
        return bytes
    }

    /// The entries of a blob. A damaged or unknown blob yields the entries read before the damage
    /// (never a crash); an empty blob none.
    static func decode<Entry: PackedEntry>(_ raw: UnsafeRawBufferPointer, as _: Entry.Type = Entry.self) -> [Entry] {
        guard let first = raw.first, let layout = Layout(rawValue: first) else { return [] }
        var entries: [Entry] = []
        switch layout {
        case .words:
            let count = (raw.count - 1) / entryBytes
            entries.reserveCapacity(count)
            for index in 0..<count {
                let offset = 1 + index * entryBytes
                entries.append(
                    Entry(
                        words: (
                            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)),
                            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                        )))
            }
        case .varints:
            guard var cursor = VarintCursor(raw) else { return [] }
            while let integers = cursor.next() { entries.append(Entry(integers: integers)) }
        }
        return entries
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// The varint at `offset`, advancing it; `nil` when the bytes end first or it is over 10 bytes.
    static func readVarint(_ raw: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < raw.count, shift < 70 {
            let byte = raw[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    static func decode<Entry: PackedEntry>(_ bytes: [UInt8], as _: Entry.Type = Entry.self) -> [Entry] {
        bytes.withUnsafeBytes { decode($0) }
    }

    /// Registers `ll_merge_counts(a, b)` and `ll_merge_buckets(a, b)` on a connection: both take
    /// two packed blobs and return their merge (buckets coarsened to ``maxBuckets``); and the
    /// explorer's `ll_merge_explorer_map` (``ExplorerMergeFunction``) and the fine bucket cells'
    /// `ll_merge_bucket_cells` and `ll_cell_buckets` (``BucketCell``).
    static func registerFunctions(on handle: OpaquePointer) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let counts = sqlite3_create_function_v2(
            handle, "ll_merge_counts", 2, flags, nil,
            { context, _, arguments in
                RollupBlob.mergeFunction(context, arguments, CountEntry.self) { $0 }
            }, nil, nil, nil)
        guard counts == SQLITE_OK else { return counts }
        let buckets = sqlite3_create_function_v2(
            handle, "ll_merge_buckets", 2, flags, nil,
            { context, _, arguments in
                RollupBlob.mergeFunction(
                    context, arguments, BucketEntry.self, limit: RollupBlob.maxBuckets, finish: RollupBlob.coarsen)
            }, nil, nil, nil)
        guard buckets == SQLITE_OK else { return buckets }
        let explorer = ExplorerMergeFunction.register(on: handle)
        guard explorer == SQLITE_OK else { return explorer }
        return BucketCell.registerFunctions(on: handle)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func mergeFunction<Entry: PackedEntry>(
        _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?, _: Entry.Type,
        limit: Int = .max, finish: ([Entry]) -> [Entry]
    ) {
        guard let arguments else { return sqlite3_result_null(context) }
        let merged = mergeBlobs(
            argumentBytes(arguments[0]), argumentBytes(arguments[1]), as: Entry.self, limit: limit, finish: finish)
        // A blob holding no entry is its layout byte alone.
        guard merged.count > 1 else { return sqlite3_result_zeroblob(context, 0) }
        merged.withUnsafeBytes { raw in
            sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
        }
    }

    /// The bytes of a SQL function's blob argument (empty for NULL or a zero-length blob).
    static func argumentBytes(_ value: OpaquePointer?) -> UnsafeRawBufferPointer {
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, let pointer = sqlite3_value_blob(value) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }
}
