import LifelineStorage

/// The explorer's version rows kept in memory (``ExplorerWorker/versionCache``), written in the
/// rollups' parts (``RollupParts``, migration 0026): a row belongs to the part of its version-day,
/// each part has a watermark of its own (level 2 of `rollup_watermarks`;
/// `aggregation_state.explorer_version_through` keeps the lowest), and once the cache is due a
/// busy writer writes one part per fold. Written whole, ~16,000 rows on the iOS 27 load took
/// 64–113 ms, during which the door's batches waited.
extension ExplorerStage {
    static let readVersionParts = "SELECT part, through FROM rollup_watermarks WHERE level = 2"
    static let writeVersionPart = """
        INSERT INTO rollup_watermarks (level, part, through) VALUES (2, ?, ?)
        ON CONFLICT (level, part) DO UPDATE SET through = excluded.through
        """

    /// The stored watermark of each version part, by part: one without a row (only a hand-edited
    /// file lacks one) sits on `explorer_version_through`.
    static func versionWatermarks(on connection: Connection) throws(StoreError) -> [Int64] {
        let lowest = try connection.first(readWatermarks) { $0.int64(1) } ?? 0
        var marks = Array(repeating: lowest, count: RollupParts.count)
        let rows = try connection.query(readVersionParts) { ($0.int64(0), $0.int64(1)) }
        for (part, through) in rows where marks.indices.contains(Int(part)) {
            marks[Int(part)] = through
        }
        return marks
    }

    /// Begins writing the cache, one part per fold from this one: every cached row holds every
    /// document up to `explorer_through` as this transaction leaves it (no unsealed version row
    /// holds one of those). The rows are grouped by part here, once: the cache takes no rows until
    /// the write ends (the folds in between no longer walk the whole cache).
    func beginCacheWrite() throws(StoreError) {
        guard let through = wroteThrough ?? held?.base else {
            throw StoreError(.internal, "internal storage error", cause: "explorer cache written outside a fold")
        }
        var keys = Array(repeating: [ExplorerRowKey](), count: RollupParts.count)
        for key in worker.versionCache.keys {
            keys[RollupParts.part(app: key.app, day: key.day, version: key.version)].append(key)
        }
        cacheWrite = (keys.enumerated().map { (part: $0.offset, keys: $0.element) }, through, cachedDocuments)
    }

    /// Writes the cached rows of the next part of the cache's write (``cacheWrite``) as they are,
    /// and moves that part's watermark (and those of the parts before the next one with cached
    /// rows, which have none to write); the last part ends the write, and the cache is empty (its
    /// documents are no longer held, those of seals written meanwhile still are).
    func writeNextCachePart(on connection: Connection) throws(StoreError) {
        guard var write = cacheWrite, !write.parts.isEmpty else { return }
        var moved: [Int] = []
        var wrote = false
        while let next = write.parts.first {
            if !next.keys.isEmpty, wrote { break }
            write.parts.removeFirst()
            moved.append(next.part)
            for key in next.keys {
                guard let cells = worker.versionCache.removeValue(forKey: key) else { continue }
                try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
                cachedBytes -= cells.count
            }
            wrote = wrote || !next.keys.isEmpty
        }
        try moveVersionWatermarks(moved, to: write.through, on: connection)
        guard write.parts.isEmpty else {
            cacheWrite = write
            return
        }
        cacheWrite = nil
        cachedBytes = 0
        // The documents of fine-only seals written meanwhile: their version rows are unsealed.
        cachedDocuments = max(0, cachedDocuments - write.documents)
        cachedSince = cachedDocuments > 0 ? .now : nil
    }

    /// Every cached version row, as it is, and every part's watermark moved to `through` (where
    /// `explorer_through` stands when this transaction commits: the rows merged in SQL after this
    /// one hold the rest).
    func writeCache(through: Int64, on connection: Connection) throws(StoreError) {
        for (key, cells) in worker.versionCache {
            try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
        }
        try moveVersionWatermarks(nil, to: through, on: connection)
        worker.versionCache = [:]
        cacheWrite = nil
        cachedDocuments = 0
        cachedSince = nil
        cachedBytes = 0
    }

    /// Moves the watermark of the version rows' `parts` (all of them: `nil`) to `through` in this
    /// transaction, and `explorer_version_through` to the lowest.
    private func moveVersionWatermarks(_ parts: [Int]?, to through: Int64, on connection: Connection)
        throws(StoreError)
    {
        var marks = wroteVersionBases ?? versionBases ?? Array(repeating: through, count: RollupParts.count)
        for part in parts ?? Array(marks.indices) {
            marks[part] = through
            try connection.run(Self.writeVersionPart, [.integer(Int64(part)), .integer(through)])
        }
        try connection.run(Self.writeVersionWatermark, [.integer(marks.min() ?? through)])
        wroteVersionBases = marks
    }
}
