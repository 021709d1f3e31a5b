import LifelineStorage

/// The explorer's version rows kept in memory (``ExplorerWorker/versionCache``) between the seal
/// that prepared them and their write, in the rollups' parts (``RollupParts``, migration 0026): a
/// row belongs to the part of its version-day, each part has a watermark of its own (level 2 of
/// `rollup_watermarks`; `aggregation_state.explorer_version_through` keeps the lowest), and a
/// busy writer writes one part per fold. Written whole, ~16,000 rows on the iOS 27 load took
/// 64–113 ms, during which the door's batches waited. Here too: when the parts fall due to be
/// sealed (``versionPartsDue(_:)``) and when a cached part falls due to be written.
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

    /// When the oldest part in the cache falls due: at once when the version rows are sealed a
    /// part at a time; when every seal takes them all, ``Deferral/versionMaxAge`` after it was
    /// first sealed there (later seals merge into the cached rows meanwhile).
    func cacheDueAt(_ deferral: Deferral) -> ContinuousClock.Instant? {
        guard let first = cacheReady.first else { return nil }
        return deferral.holdsVersions ? first.since : first.since + deferral.versionMaxAge
    }

    /// When the next version part falls due by age.
    func versionPartDueAt(_ deferral: Deferral) -> ContinuousClock.Instant {
        (versionPartSealedAt ?? .now) + deferral.versionMaxAge / RollupParts.count
    }

    /// The version parts due by age: one per ``Deferral/versionMaxAge`` divided by the parts'
    /// count since the last was sealed, all of them at most (a load whose fine rows are sealed
    /// once a second takes four parts at a time: each part still every ``Deferral/versionMaxAge``).
    func versionPartsDue(_ deferral: Deferral) -> Int {
        guard deferral.holdsVersions else { return 0 }
        let interval = deferral.versionMaxAge / RollupParts.count
        guard interval > .zero else { return RollupParts.count }
        let elapsed = ContinuousClock.now - (versionPartSealedAt ?? .now)
        return min(RollupParts.count, Int(elapsed / interval))
    }

    /// Writes the cached rows of the oldest part waiting in the cache (``cacheReady``) as they
    /// are, and moves its watermark to the seal that took it last (parts with no cached row after
    /// it move with it: they have none to write).
    func writeNextCachePart(on connection: Connection) throws(StoreError) {
        guard let first = cacheReady.first else { return }
        var parts = [first]
        var rows: [(key: ExplorerRowKey, cells: [UInt8])] = []
        var partsWithRows = Set<Int>()
        for (key, cells) in worker.versionCache {
            let part = RollupParts.part(app: key.app, day: key.day, version: key.version)
            partsWithRows.insert(part)
            if part == first.part { rows.append((key, cells)) }
        }
        for next in cacheReady.dropFirst() {
            guard !partsWithRows.contains(next.part) else { break }
            parts.append(next)
        }
        for row in rows {
            worker.versionCache[row.key] = nil
            try rowWriter.write(row.cells, at: row.key, .byVersion, merging: false, on: connection)
        }
        cacheReady.removeFirst(parts.count)
        for part in parts { try moveVersionWatermarks([part.part], to: part.through, on: connection) }
    }

    /// Writes the cached rows of `parts` as they are, and moves their watermarks to their
    /// ``cacheReady`` entry's (the sealed rows merged in SQL after this hold the rest).
    func writeCacheParts(_ parts: Set<Int>, on connection: Connection) throws(StoreError) {
        let keys = worker.versionCache.keys.filter {
            parts.contains(RollupParts.part(app: $0.app, day: $0.day, version: $0.version))
        }
        for key in keys {
            guard let cells = worker.versionCache.removeValue(forKey: key) else { continue }
            try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
        }
        for ready in cacheReady where parts.contains(ready.part) {
            try moveVersionWatermarks([ready.part], to: ready.through, on: connection)
        }
        cacheReady.removeAll { parts.contains($0.part) }
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
        cacheReady = []
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
