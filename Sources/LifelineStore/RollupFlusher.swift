/// Sums a ``RollupDeltas`` log per rollup key and adds it to the rollup tables of both levels
/// with one upsert per key (`ON CONFLICT … DO UPDATE SET count = count + excluded.count`), on
/// cached prepared statements. Runs inside the caller's transaction.
enum RollupFlusher {
    private struct Usage {
        var payloads: Int64 = 0
        var foreground: Double = 0
        var background: Double = 0
    }

    private struct PairKey: Hashable {
        var cell: RollupDeltas.Cell
        var a: Int64
        var b: Int64
    }

    private struct BucketKey: Hashable {
        var cell: RollupDeltas.Cell
        var source: Int64
        var start: Double
        var end: Double
    }

    private struct DiagnosticKey: Hashable {
        var cell: RollupDeltas.Cell
        var kind: String
        var crashGroup: Int64
    }

    /// Adds `deltas` to the rollups of both levels.
    static func flush(_ deltas: RollupDeltas, on connection: Connection) throws(StoreError) {
        guard !deltas.isEmpty else { return }
        for level in RollupLevel.allCases {
            let project: (RollupDeltas.Cell) -> RollupDeltas.Cell = level == .fine ? { $0 } : { $0.byVersion }
            try flushUsage(deltas.usage, level: level, project: project, on: connection)
            var exits: [PairKey: Int64] = [:]
            for exit in deltas.exits {
                exits[PairKey(cell: project(exit.cell), a: exit.state, b: exit.reason), default: 0] &+= exit.count
            }
            try upsertPairs(exits, sql: level.upsertExits, level: level, on: connection)
            var signposts: [PairKey: Int64] = [:]
            for signpost in deltas.signposts {
                signposts[PairKey(cell: project(signpost.cell), a: signpost.category, b: signpost.name), default: 0] &+=
                    signpost.count
            }
            try upsertPairs(signposts, sql: level.upsertSignposts, level: level, on: connection)
            if level.hasBuckets { try flushBuckets(deltas.buckets, level: level, project: project, on: connection) }
            try flushDiagnostics(deltas.diagnostics, level: level, project: project, on: connection)
        }
    }

    private static func flushUsage(
        _ rows: [RollupDeltas.Usage], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var sums: [RollupDeltas.Cell: Usage] = [:]
        for row in rows {
            sums[project(row.cell), default: Usage()].payloads += 1
            sums[project(row.cell), default: Usage()].foreground += row.foregroundMilliseconds
            sums[project(row.cell), default: Usage()].background += row.backgroundMilliseconds
        }
        let statement = try connection.cached(level.upsertUsage)
        for (cell, usage) in sums {
            let next = try bind(cell, level: level, to: statement)
            try statement.bind(int: usage.payloads, at: next)
            try statement.bind(double: usage.foreground, at: next + 1)
            try statement.bind(double: usage.background, at: next + 2)
            try statement.runToCompletion()
        }
    }

    private static func upsertPairs(
        _ sums: [PairKey: Int64], sql: String, level: RollupLevel, on connection: Connection
    ) throws(StoreError) {
        guard !sums.isEmpty else { return }
        let statement = try connection.cached(sql)
        for (key, count) in sums {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(int: key.a, at: next)
            try statement.bind(int: key.b, at: next + 1)
            try statement.bind(int: count, at: next + 2)
            try statement.runToCompletion()
        }
    }

    private static func flushBuckets(
        _ rows: [RollupDeltas.Bucket], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var sums: [BucketKey: Int64] = [:]
        sums.reserveCapacity(rows.count)
        for row in rows {
            sums[BucketKey(cell: project(row.cell), source: row.source, start: row.start, end: row.end), default: 0] &+=
                row.count
        }
        let statement = try connection.cached(level.upsertBuckets)
        for (key, count) in sums {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(int: key.source, at: next)
            try statement.bind(double: key.start, at: next + 1)
            try statement.bind(double: key.end, at: next + 2)
            try statement.bind(int: count, at: next + 3)
            try statement.runToCompletion()
        }
    }

    private static func flushDiagnostics(
        _ rows: [RollupDeltas.Diagnostic], level: RollupLevel, project: (RollupDeltas.Cell) -> RollupDeltas.Cell,
        on connection: Connection
    ) throws(StoreError) {
        guard !rows.isEmpty else { return }
        var sums: [DiagnosticKey: Int64] = [:]
        for row in rows {
            sums[DiagnosticKey(cell: project(row.cell), kind: row.kind, crashGroup: row.crashGroup), default: 0] += 1
        }
        let statement = try connection.cached(level.upsertDiagnostics)
        for (key, count) in sums {
            let next = try bind(key.cell, level: level, to: statement)
            try statement.bind(.text(key.kind), at: next)
            try statement.bind(int: key.crashGroup, at: next + 1)
            try statement.bind(int: count, at: next + 2)
            try statement.runToCompletion()
        }
    }

    /// Binds the key columns of `cell` at `level`; returns the next parameter index.
    private static func bind(
        _ cell: RollupDeltas.Cell, level: RollupLevel, to statement: Statement
    ) throws(StoreError) -> Int32 {
        try statement.bind(int: cell.app, at: 1)
        try statement.bind(int: cell.day, at: 2)
        try statement.bind(int: cell.version, at: 3)
        guard level == .fine else { return 4 }
        try statement.bind(int: cell.os, at: 4)
        try statement.bind(int: cell.device, at: 5)
        return 6
    }
}
