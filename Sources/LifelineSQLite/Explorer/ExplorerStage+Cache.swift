import LifelineStorage

/// The explorer's rows kept in memory (``ExplorerStage/fineCache``,
/// ``ExplorerWorker/versionCache``) between the seal that prepared them and their write, in the
/// rollups' parts (``RollupParts``): a row belongs to the part of its version-day, each part of
/// each level has a watermark of its own (`rollup_watermarks`, level 3 the fine rows' since
/// migration 0028, level 2 the version rows' since 0026; `aggregation_state.explorer_through` and
/// `explorer_version_through` keep each level's lowest), and a busy writer writes one part per fold
/// (more while their rows are few). Written whole, a seal's fine rows took up to 48 ms on the
/// iOS 27 load, and the version cache (~16,000 rows) 64–113 ms, during which the door's batches
/// waited. Here too: when the version parts fall due to be sealed (``versionPartsDue(_:)``).
extension ExplorerStage {
    static let readParts = """
        SELECT level, part, through FROM rollup_watermarks
        WHERE level IN (\(watermarkLevel(.byVersion)), \(watermarkLevel(.fine)))
        """
    static let writePart = """
        INSERT INTO rollup_watermarks (level, part, through) VALUES (?, ?, ?)
        ON CONFLICT (level, part) DO UPDATE SET through = excluded.through
        """
    /// A level's number in `rollup_watermarks` (0 and 1 are the rollups').
    static func watermarkLevel(_ level: RollupLevel) -> Int64 { level == .fine ? 3 : 2 }

    /// Every part at `through`.
    static func uniform(_ through: Int64) -> ExplorerWorker.PartBases {
        let marks = Array(repeating: through, count: RollupParts.count)
        return ExplorerWorker.PartBases(fine: marks, version: marks)
    }

    /// The stored watermark of each part of both levels, and each level's lowest as
    /// `aggregation_state` keeps it: a part without a row (only a hand-edited file lacks one) sits
    /// on its level's lowest there.
    static func storedWatermarks(on connection: Connection) throws(StoreError)
        -> (parts: ExplorerWorker.PartBases, lowest: (fine: Int64, version: Int64))
    {
        let lowest: (fine: Int64, version: Int64) =
            try connection.first(readWatermarks) { ($0.int64(0), $0.int64(1)) } ?? (0, 0)
        var parts = ExplorerWorker.PartBases(
            fine: Array(repeating: lowest.fine, count: RollupParts.count),
            version: Array(repeating: lowest.version, count: RollupParts.count))
        let rows = try connection.query(readParts) { ($0.int64(0), Int($0.int64(1)), $0.int64(2)) }
        for (level, part, through) in rows where parts.fine.indices.contains(part) {
            if level == watermarkLevel(.fine) { parts.fine[part] = through } else { parts.version[part] = through }
        }
        return (parts, lowest)
    }

    /// Stores every part's watermark of both levels as `parts`, and each level's lowest.
    static func storeWatermarks(_ parts: ExplorerWorker.PartBases, on connection: Connection) throws(StoreError) {
        for (level, marks) in [(RollupLevel.fine, parts.fine), (.byVersion, parts.version)] {
            for (part, mark) in marks.enumerated() {
                try connection.run(writePart, [.integer(watermarkLevel(level)), .integer(Int64(part)), .integer(mark)])
            }
            try connection.run(
                level == .fine ? writeWatermark : writeVersionWatermark, [.integer(marks.min() ?? 0)])
        }
    }

    /// When a part in the caches falls due: a fine one at once; a version one at once when the
    /// version rows are sealed a part at a time, ``Deferral/versionMaxAge`` after it was first
    /// sealed there when every seal takes them all (later seals merge into the cached rows).
    private func dueAt(_ ready: (level: RollupLevel, since: ContinuousClock.Instant), _ deferral: Deferral)
        -> ContinuousClock.Instant
    {
        ready.level == .fine || deferral.holdsVersions ? ready.since : ready.since + deferral.versionMaxAge
    }

    /// When the first part in the caches falls due.
    func cacheDueAt(_ deferral: Deferral) -> ContinuousClock.Instant? {
        cacheReady.map { dueAt(($0.level, $0.since), deferral) }.min()
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

    /// Writes the cached parts due, oldest first: one, then more while this fold has written
    /// fewer than ``Deferral/cacheRowsPerFold`` rows. The version cache is the writer's only while
    /// no seal is being prepared (a prepare merges sealed version rows into its cells): its parts
    /// wait then (`versions` false).
    func writeDueCacheParts(_ deferral: Deferral, versions: Bool, on connection: Connection) throws(StoreError) {
        var wrote = false
        let now = ContinuousClock.now
        while !wrote || rowWriter.rowsWritten < deferral.cacheRowsPerFold,
            let index = cacheReady.firstIndex(where: {
                ($0.level == .fine || versions) && dueAt(($0.level, $0.since), deferral) <= now
            })
        {
            try writeCachePart(at: index, on: connection)
            wrote = true
        }
    }

    /// Writes the cached rows of the part waiting in the caches at `index` of ``cacheReady`` as
    /// they are, and moves its watermark to the seal that took it last (the parts of its level
    /// with no cached row that come after it move with it: they have none to write).
    func writeCachePart(at index: Int, on connection: Connection) throws(StoreError) {
        let first = cacheReady[index]
        let partsWithRows = cachedParts(of: first.level).subtracting([first.part])
        try writeCachedRows(of: [first.part], level: first.level, on: connection)
        var moving = [first]
        for next in cacheReady[(index + 1)...] where next.level == first.level {
            guard !partsWithRows.contains(next.part) else { break }
            moving.append(next)
        }
        cacheReady.removeAll { ready in
            ready.level == first.level && moving.contains { $0.part == ready.part }
        }
        try moveWatermarks(first.level, moving.map { ($0.part, $0.through) }, on: connection)
    }

    /// Writes the cached rows of `parts` of `level` as they are, and moves their watermarks to
    /// their ``cacheReady`` entry's (the sealed rows merged in SQL after this hold the rest).
    func writeCacheParts(_ parts: Set<Int>, of level: RollupLevel, on connection: Connection) throws(StoreError) {
        try writeCachedRows(of: parts, level: level, on: connection)
        let ready = cacheReady.filter { $0.level == level && parts.contains($0.part) }
        try moveWatermarks(level, ready.map { ($0.part, $0.through) }, on: connection)
        cacheReady.removeAll { $0.level == level && parts.contains($0.part) }
    }

    /// Every cached row of both levels, as it is, and every part's watermark moved to `through`
    /// (where the fold ends: the rows merged in SQL after this one hold the rest).
    func writeCache(through: Int64, on connection: Connection) throws(StoreError) {
        let all = Set(0..<RollupParts.count)
        for level in [RollupLevel.fine, .byVersion] {
            try writeCachedRows(of: all, level: level, on: connection)
            try moveWatermarks(level, all.sorted().map { ($0, through) }, on: connection)
        }
        cacheReady = []
    }

    /// The parts of `level` with rows in the caches.
    private func cachedParts(of level: RollupLevel) -> Set<Int> {
        guard level == .byVersion else { return Set(fineCache.indices.filter { !fineCache[$0].isEmpty }) }
        return Set(worker.versionCache.keys.map { RollupParts.part(app: $0.app, day: $0.day, version: $0.version) })
    }

    /// Writes the cached rows of `parts` of `level` as they are (fine ones in seal order, merged
    /// in SQL when their prepare did not read the stored row), and takes them out of the cache.
    private func writeCachedRows(of parts: Set<Int>, level: RollupLevel, on connection: Connection)
        throws(StoreError)
    {
        if level == .fine {
            for part in parts.sorted() {
                let rows = fineCache[part]
                fineCache[part] = []
                for row in rows {
                    try rowWriter.write(row.cells, at: row.key, .fine, merging: row.mergesStored, on: connection)
                }
            }
            return
        }
        let keys = worker.versionCache.keys.filter {
            parts.contains(RollupParts.part(app: $0.app, day: $0.day, version: $0.version))
        }
        for key in keys {
            guard let cells = worker.versionCache.removeValue(forKey: key) else { continue }
            try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
        }
    }

    /// Moves the watermarks of `moves`' parts of `level` to their `through` in this transaction,
    /// and the level's lowest in `aggregation_state` with them (once).
    private func moveWatermarks(_ level: RollupLevel, _ moves: [(part: Int, through: Int64)], on connection: Connection)
        throws(StoreError)
    {
        guard !moves.isEmpty else { return }
        // The stage's bases are set by every fold that reaches here (``begin``).
        var moved = wroteBases ?? bases ?? Self.uniform(0)
        var marks = level == .fine ? moved.fine : moved.version
        for move in moves {
            marks[move.part] = move.through
            try connection.run(
                Self.writePart,
                [.integer(Self.watermarkLevel(level)), .integer(Int64(move.part)), .integer(move.through)])
        }
        try connection.run(
            level == .fine ? Self.writeWatermark : Self.writeVersionWatermark, [.integer(marks.min() ?? 0)])
        if level == .fine { moved.fine = marks } else { moved.version = marks }
        wroteBases = moved
    }
}

extension ExplorerWorker {
    /// The stored watermarks of both levels' parts, by part (``RollupParts``): what a prepare's
    /// snapshot must show, and what the rows in memory sit on (``ExplorerStage``).
    struct PartBases: Equatable, Sendable {
        var fine: [Int64]
        var version: [Int64]
    }
}
