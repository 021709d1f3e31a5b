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
    static let readParts = "SELECT part, through FROM rollup_watermarks WHERE level = ?"
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

    /// The stored watermark of each part of `level`, by part: one without a row (only a
    /// hand-edited file lacks one) sits on its level's lowest in `aggregation_state`.
    static func partWatermarks(_ level: RollupLevel, on connection: Connection) throws(StoreError) -> [Int64] {
        let lowest = try connection.first(readWatermarks) { level == .fine ? $0.int64(0) : $0.int64(1) } ?? 0
        var marks = Array(repeating: lowest, count: RollupParts.count)
        let rows = try connection.query(readParts, [.integer(watermarkLevel(level))]) { ($0.int64(0), $0.int64(1)) }
        for (part, through) in rows where marks.indices.contains(Int(part)) {
            marks[Int(part)] = through
        }
        return marks
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
        var partsWithRows = Set<Int>()
        if first.level == .fine {
            for (part, rows) in fineCache.enumerated() where !rows.isEmpty { partsWithRows.insert(part) }
            let rows = fineCache[first.part]
            fineCache[first.part] = []
            for row in rows {
                try rowWriter.write(row.cells, at: row.key, .fine, merging: row.mergesStored, on: connection)
            }
        } else {
            var rows: [(key: ExplorerRowKey, cells: [UInt8])] = []
            for (key, cells) in worker.versionCache {
                let part = RollupParts.part(app: key.app, day: key.day, version: key.version)
                partsWithRows.insert(part)
                if part == first.part { rows.append((key, cells)) }
            }
            for row in rows {
                worker.versionCache[row.key] = nil
                try rowWriter.write(row.cells, at: row.key, .byVersion, merging: false, on: connection)
            }
        }
        partsWithRows.remove(first.part)
        var moving = [first]
        for next in cacheReady[(index + 1)...] where next.level == first.level {
            guard !partsWithRows.contains(next.part) else { break }
            moving.append(next)
        }
        cacheReady.removeAll { ready in
            ready.level == first.level && moving.contains { $0.part == ready.part }
        }
        for ready in moving { try moveWatermarks(first.level, [ready.part], to: ready.through, on: connection) }
    }

    /// Writes the cached rows of `parts` of `level` as they are, and moves their watermarks to
    /// their ``cacheReady`` entry's (the sealed rows merged in SQL after this hold the rest).
    func writeCacheParts(_ parts: Set<Int>, of level: RollupLevel, on connection: Connection) throws(StoreError) {
        func taken(_ key: ExplorerRowKey) -> Bool {
            parts.contains(RollupParts.part(app: key.app, day: key.day, version: key.version))
        }
        if level == .fine {
            for part in parts.sorted() {
                let rows = fineCache[part]
                fineCache[part] = []
                for row in rows {
                    try rowWriter.write(row.cells, at: row.key, .fine, merging: row.mergesStored, on: connection)
                }
            }
        } else {
            for key in worker.versionCache.keys.filter(taken) {
                guard let cells = worker.versionCache.removeValue(forKey: key) else { continue }
                try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
            }
        }
        for ready in cacheReady where ready.level == level && parts.contains(ready.part) {
            try moveWatermarks(level, [ready.part], to: ready.through, on: connection)
        }
        cacheReady.removeAll { $0.level == level && parts.contains($0.part) }
    }

    /// Every cached row of both levels, as it is, and every part's watermark moved to `through`
    /// (where the fold ends: the rows merged in SQL after this one hold the rest).
    func writeCache(through: Int64, on connection: Connection) throws(StoreError) {
        for row in fineCache.joined() {
            try rowWriter.write(row.cells, at: row.key, .fine, merging: row.mergesStored, on: connection)
        }
        for (key, cells) in worker.versionCache {
            try rowWriter.write(cells, at: key, .byVersion, merging: false, on: connection)
        }
        try moveWatermarks(.fine, nil, to: through, on: connection)
        try moveWatermarks(.byVersion, nil, to: through, on: connection)
        fineCache = Array(repeating: [], count: RollupParts.count)
        worker.versionCache = [:]
        cacheReady = []
    }

    /// Moves the watermark of `parts` of `level` (all of them: `nil`) to `through` in this
    /// transaction, and the level's lowest in `aggregation_state` with them.
    private func moveWatermarks(_ level: RollupLevel, _ parts: [Int]?, to through: Int64, on connection: Connection)
        throws(StoreError)
    {
        var moved = wroteBases ?? bases ?? Self.uniform(through)
        var marks = level == .fine ? moved.fine : moved.version
        for part in parts ?? Array(marks.indices) {
            marks[part] = through
            try connection.run(
                Self.writePart, [.integer(Self.watermarkLevel(level)), .integer(Int64(part)), .integer(through)])
        }
        try connection.run(
            level == .fine ? Self.writeWatermark : Self.writeVersionWatermark, [.integer(marks.min() ?? through)])
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
