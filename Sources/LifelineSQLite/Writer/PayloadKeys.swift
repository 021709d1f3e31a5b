import LifelineStorage

/// The door's lookup of stored contents, and the payloads' two lookup tables filled in bulk
/// (migration 0031): `payload_keys` (app, content hash → payload) and `payload_days` (app, kind,
/// day → payloads) hold every payload up to `aggregation_state.indexed_through`; the payloads
/// above it (the tail) are held here by content, so the door finds a duplicate in memory or in
/// `payload_keys`, and writes no index entry of its own. ``mergeStep(on:)`` moves the tail into
/// both tables with sorted `INSERT`s, where one page takes many entries: a random index entry
/// per document dirtied a page of its own, written whole to the WAL and again by the checkpoint.
/// A merge goes in steps of ``chunkEntries`` keys, each a range of `payload_keys` (so a step
/// touches its share of the table's pages), the door's batches between them; the last step also
/// fills `payload_days` and advances the watermark.
///
/// Used by the writer's thread only. The tail is rebuilt from `payloads` at the start, so a crash
/// loses nothing: what the watermark does not cover is read again.
struct PayloadKeys {
    /// An app and a SHA-256, as four words (no array per entry).
    struct Key: Hashable, Comparable {
        var app: Int64
        var words: (UInt64, UInt64, UInt64, UInt64)

        init?(app: Int64, hash: [UInt8]) {
            guard hash.count == 32 else { return nil }
            func word(_ offset: Int) -> UInt64 {
                var value: UInt64 = 0
                for index in offset..<offset + 8 { value = value << 8 | UInt64(hash[index]) }
                return value
            }
            self.app = app
            words = (word(0), word(8), word(16), word(24))
        }

        /// The SHA-256's bytes again (``init(app:hash:)``'s inverse).
        var hash: [UInt8] {
            [words.0, words.1, words.2, words.3].flatMap { word in
                stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: word >> UInt64($0)) }
            }
        }

        static func == (a: Key, b: Key) -> Bool { a.app == b.app && a.words == b.words }

        /// The order of `payload_keys`: app, then the hash's bytes (big-endian words).
        static func < (a: Key, b: Key) -> Bool {
            a.app != b.app
                ? a.app < b.app
                : (a.words.0, a.words.1, a.words.2, a.words.3) < (b.words.0, b.words.1, b.words.2, b.words.3)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(app)
            hasher.combine(words.0)
            hasher.combine(words.1)
        }
    }

    /// The fewest and the most tail entries a merge moves: a merge is due at a sixteenth of the
    /// indexed payloads within these bounds (the larger the tables, the more entries share a page).
    static let minimumMerge = 4_096
    static let maximumMerge = 65_536
    /// Keys a merge step moves at most (a range of `payload_keys`' pages: ~35 ms of the writer
    /// over a table of 1,000,000, where a merge in one transaction held the door ~0.26 s).
    var chunkEntries = 8_192
    /// A tail this old is merged when the door is idle, whatever its size.
    static let idleMergeAge: Duration = .seconds(60)

    static let readWatermark = "SELECT indexed_through FROM aggregation_state WHERE id = 1"
    static let readHead = "SELECT coalesce(max(id), 0) FROM payloads"
    static let readTail = "SELECT id, app, content_hash FROM payloads WHERE id > ? ORDER BY id"
    static let stillStored = "SELECT 1 FROM payloads WHERE id = ? AND app = ? AND content_hash = ?"
    static let findIndexed = """
        SELECT k.payload FROM payload_keys k JOIN payloads p ON p.id = k.payload
        WHERE k.app = ? AND k.content_hash = ?
        """
    /// The payloads of an id range whose key is in `[(?3, ?4), (?5, ?6))` (NULL: unbounded).
    static let mergeKeys = """
        INSERT OR IGNORE INTO payload_keys (app, content_hash, payload)
        SELECT app, content_hash, id FROM payloads
        WHERE id > ?1 AND id <= ?2 AND (?3 IS NULL OR (app, content_hash) >= (?3, ?4))
            AND (?5 IS NULL OR (app, content_hash) < (?5, ?6))
        ORDER BY app, content_hash
        """
    static let mergeDays = """
        INSERT OR IGNORE INTO payload_days (app, kind, day, payload)
        SELECT app, kind, day, id FROM payloads WHERE id > ?1 AND id <= ?2 ORDER BY app, kind, day, id
        """
    static let writeWatermark = "UPDATE aggregation_state SET indexed_through = ? WHERE id = 1"

    /// The payloads above the watermark, by content.
    private(set) var tail: [Key: Int64] = [:]
    /// Every payload up to this id is in `payload_keys` and `payload_days`.
    private(set) var indexedThrough: Int64 = 0
    /// The highest payload id committed that this writer knows of.
    private var head: Int64 = 0
    /// When the tail's oldest entry came (nil: the tail is empty).
    private var oldest: ContinuousClock.Instant?
    /// The merge under way: the highest id it moves, and the lower key bounds of its steps left
    /// (the first one's is nil: unbounded).
    private var merging: (through: Int64, starts: [Key?])?

    /// Whether a merge is under way (its next step is due at once).
    var isMerging: Bool { merging != nil }

    /// Tail entries that make a merge due.
    var threshold: Int { min(max(Int(indexedThrough / 16), Self.minimumMerge), Self.maximumMerge) }

    /// Whether the tail is large enough to merge now.
    var mergeDue: Bool { tail.count >= threshold }

    /// Whether an idle writer should merge the tail (not empty, and old).
    var idleMergeDue: Bool { idleMergeAt.map { ContinuousClock.now >= $0 } ?? false }

    /// When an idle writer should merge the tail (nil: it is empty).
    var idleMergeAt: ContinuousClock.Instant? { oldest.map { $0 + Self.idleMergeAge } }

    /// Reads the watermark and the tail above it (at the start).
    mutating func load(on connection: Connection) throws(StoreError) {
        indexedThrough = try connection.first(Self.readWatermark) { $0.int64(0) } ?? 0
        tail.removeAll()
        head = indexedThrough
        oldest = nil
        try catchUp(on: connection)
    }

    /// Reads the payloads committed above the highest id this writer knows of (another process
    /// writing the same file, say `lifeline ingest`): one lookup of the highest id when there are
    /// none. In the door's transaction, before its first lookup.
    mutating func catchUp(on connection: Connection) throws(StoreError) {
        let newest = try connection.first(Self.readHead) { $0.int64(0) } ?? 0
        guard newest > head else { return }
        let rows = try connection.query(Self.readTail, [.integer(head)]) {
            (id: $0.int64(0), app: $0.int64(1), hash: $0.blob(2))
        }
        for row in rows {
            if let key = Key(app: row.app, hash: row.hash) { add(key, id: row.id) }
        }
        head = max(head, newest)
    }

    /// The payload of `app` holding the content `hash`, if one is stored. A tail entry whose
    /// payload is gone (a request rolled back, a payload pruned) is dropped.
    mutating func find(app: Int64, hash: [UInt8], on connection: Connection) throws(StoreError) -> Int64? {
        if let key = Key(app: app, hash: hash), let id = tail[key] {
            let stored = try connection.first(Self.stillStored, [.integer(id), .integer(app), .blob(hash)]) {
                $0.int64(0)
            }
            if stored != nil { return id }
            tail[key] = nil
        }
        return try connection.first(Self.findIndexed, [.integer(app), .blob(hash)]) { $0.int64(0) }
    }

    /// A payload the door inserted (in a transaction not committed yet).
    mutating func inserted(_ id: Int64, app: Int64, hash: [UInt8]) {
        if let key = Key(app: app, hash: hash) { add(key, id: id) }
    }

    /// Payloads the door inserted and rolled back: forgotten.
    mutating func rolledBack(_ items: [(id: Int64, app: Int64, hash: [UInt8])]) {
        for item in items {
            if let key = Key(app: item.app, hash: item.hash), tail[key] == item.id { tail[key] = nil }
        }
        if tail.isEmpty { oldest = nil }
    }

    /// The door committed payloads up to `id`.
    mutating func committed(through id: Int64) {
        head = max(head, id)
    }

    /// One step of a merge, starting one when none is under way: the committed payloads above
    /// the watermark (up to the highest id when it started) whose key is in the step's range go
    /// into `payload_keys`; the last step also puts them all into `payload_days` and advances the
    /// watermark, in its transaction. Not synced: a step a power loss takes is done again from the
    /// tail read at the start (`INSERT OR IGNORE`). Returns whether the merge is complete.
    @discardableResult
    mutating func mergeStep(on connection: Connection) throws(StoreError) -> Bool {
        try connection.syncCommits(false)
        if merging == nil {
            let through = try connection.first(Self.readHead) { $0.int64(0) } ?? 0
            guard through > indexedThrough else { return true }
            merging = (through, Self.starts(of: tail.filter { $0.value <= through }.keys, every: chunkEntries))
        }
        guard var step = merging, let start = step.starts.first else { return true }
        step.starts.removeFirst()
        let end = step.starts.first ?? nil
        let (from, through) = (indexedThrough, step.through)
        let last = step.starts.isEmpty
        try connection.transaction { () throws(StoreError) in
            try connection.run(
                Self.mergeKeys,
                [.integer(from), .integer(through)] + Self.bound(start) + Self.bound(end))
            if last {
                try connection.run(Self.mergeDays, [.integer(from), .integer(through)])
                try connection.run(Self.writeWatermark, [.integer(through)])
            }
        }
        guard last else {
            merging = step
            return false
        }
        merging = nil
        indexedThrough = through
        head = max(head, through)
        if tail.values.contains(where: { $0 > through }) {
            tail = tail.filter { $0.value > through }
        } else {
            tail.removeAll(keepingCapacity: tail.count <= Self.maximumMerge)
        }
        oldest = tail.isEmpty ? nil : .now
        return true
    }

    /// The lower bounds of steps of `every` keys each, in key order (the first: nil).
    static func starts(of keys: some Collection<Key>, every: Int) -> [Key?] {
        let sorted = keys.sorted()
        return [nil] + stride(from: max(1, every), to: sorted.count, by: max(1, every)).map { sorted[$0] }
    }

    /// A step's bound as two bindings: its app and its hash (NULL, NULL: unbounded).
    static func bound(_ key: Key?) -> [SQLValue] {
        guard let key else { return [.null, .null] }
        return [.integer(key.app), .blob(key.hash)]
    }

    private mutating func add(_ key: Key, id: Int64) {
        if tail.isEmpty { oldest = .now }
        tail[key] = id
    }
}
