import LifelineIngest
import LifelineModel
import PostgresNIO

/// The rollup rows of one fold batch (or refold batch), summed per key in memory, then upserted
/// table by table, in key order, at both levels, with one `INSERT … SELECT FROM unnest` per table. The rows are those of the SQLite store's rollups (`RollupStage`), so both stores
/// answer the same.
struct RollupRows {
    struct Cell: Hashable, Comparable, Sendable {
        var day: String
        var version: String
        var os: String
        var device: String

        static func < (a: Cell, b: Cell) -> Bool {
            (a.day, a.version, a.os, a.device) < (b.day, b.version, b.os, b.device)
        }

        init(day: String, version: String, os: String, device: String) {
            (self.day, self.version, self.os, self.device) = (day, version, os, device)
        }

        /// The cell of `meta` on `day` (a missing dimension is '').
        init(day: String, meta: DeviceMeta) {
            self.init(
                day: day, version: meta.appVersion ?? "", os: meta.osVersion ?? "", device: meta.deviceType ?? "")
        }
    }

    struct Usage {
        var payloads: Int64 = 0
        var foreground: Double = 0
        var background: Double = 0
    }

    /// A row's key: its cell (interned, ``cells``) and its own key. The cell after the key: a
    /// ``BucketRef`` key and its cell fill 24 bytes (32 the other way round), and a backlog batch
    /// sums hundreds of thousands of version-level buckets on the reference load.
    struct Keyed<Key: Hashable>: Hashable {
        var key: Key
        var cell: Int32

        init(cell: Int32, key: Key) {
            self.key = key
            self.cell = cell
        }
    }

    /// A bucket of a histogram source (interned, ``names``); the source last, so no padding
    /// follows it inside ``Keyed``.
    struct BucketRef: Hashable {
        var start: Double
        var end: Double
        var source: Int32

        init(source: Int32, start: Double, end: Double) {
            (self.start, self.end, self.source) = (start, end, source)
        }
    }

    struct Pair: Hashable, Comparable {
        var first: String
        var second: String
        static func < (a: Pair, b: Pair) -> Bool { (a.first, a.second) < (b.first, b.second) }
    }

    struct ExitKey: Hashable, Comparable {
        var state: Int64
        var reason: String
        static func < (a: ExitKey, b: ExitKey) -> Bool { (a.state, a.reason) < (b.state, b.reason) }
    }

    struct BucketKey: Hashable, Comparable {
        var source: String
        var start: Double
        var end: Double
        static func < (a: BucketKey, b: BucketKey) -> Bool { (a.source, a.start, a.end) < (b.source, b.start, b.end) }
    }

    struct DiagnosticKey: Hashable, Comparable {
        var kind: String
        var group: Int64
        static func < (a: DiagnosticKey, b: DiagnosticKey) -> Bool { (a.kind, a.group) < (b.kind, b.group) }
    }

    static let foregroundTime = "applicationTimeMetrics.cumulativeForegroundTime"
    static let backgroundTime = "applicationTimeMetrics.cumulativeBackgroundTime"

    // Cells and histogram sources are interned: a key of plain numbers hashes, compares and
    // copies without reference counting (the fold adds ~60 buckets per document).
    private var cellTable = Interned<Cell>()
    private var nameTable = Interned<String>()
    /// The interned cells, by their id.
    var cells: [Cell] { cellTable.values }
    /// The interned histogram sources, by their id.
    var names: [String] { nameTable.values }

    var usage: [Int32: Usage] = [:]
    var exits: [Keyed<ExitKey>: Int64] = [:]
    var signposts: [Keyed<Pair>: Int64] = [:]
    var buckets: [Keyed<BucketRef>: Int64] = [:]
    var diagnostics: [Keyed<DiagnosticKey>: Int64] = [:]

    init() {}

    /// Rows sized for `documents` documents of the reference load's shape (about 8 exit reasons, 8
    /// signposts and 64 histogram buckets each): growing the dictionaries by doubling was 2 % of the
    /// leader's CPU.
    init(reservingFor documents: Int) {
        cellTable.reserveCapacity(documents)
        usage.reserveCapacity(documents)
        exits.reserveCapacity(documents * 8)
        signposts.reserveCapacity(documents * 8)
        buckets.reserveCapacity(documents * 64)
    }

    private mutating func id(_ cell: Cell) -> Int32 { cellTable.id(cell) }

    private mutating func id(name: String) -> Int32 { nameTable.id(name) }

    mutating func add(_ metric: MetricPayload, cell: Cell) {
        let cell = id(cell)
        let foreground = metric.scalars.first { $0.name == Self.foregroundTime }?.measurement.finiteValue
        let background = metric.scalars.first { $0.name == Self.backgroundTime }?.measurement.finiteValue
        usage[cell, default: Usage()].payloads += metric.isDeviceDay ? 1 : 0
        usage[cell, default: Usage()].foreground += foreground ?? 0
        usage[cell, default: Usage()].background += background ?? 0
        for exit in metric.exits where exit.count > 0 {
            guard let reason = StoredValue.dimension(exit.reason) else { continue }
            exits[Keyed(cell: cell, key: ExitKey(state: exit.state == .foreground ? 0 : 1, reason: reason)), default: 0]
                .addSaturating(exit.count)
        }
        var seenSignposts = Set<Pair>()
        for signpost in metric.signposts {
            guard let category = StoredValue.dimension(signpost.category),
                let name = StoredValue.dimension(signpost.name)
            else { continue }
            let pair = Pair(first: category, second: name)
            signposts[Keyed(cell: cell, key: pair), default: 0].addSaturating(max(0, signpost.totalCount))
            guard seenSignposts.insert(pair).inserted, let durations = signpost.durations,
                let source = StoredValue.dimension("signpost:\(signpost.category)/\(signpost.name)")
            else { continue }
            for bucket in durations.buckets { addBucket(cell: cell, source: source, bucket) }
        }
        var seenMetrics = Set<String>()
        for named in metric.histograms {
            guard let source = StoredValue.dimension(named.name), seenMetrics.insert(source).inserted else { continue }
            for bucket in named.histogram.buckets { addBucket(cell: cell, source: source, bucket) }
        }
    }

    private mutating func addBucket(cell: Int32, source: String, _ bucket: HistogramBucket) {
        guard bucket.count > 0, let low = bucket.start ?? bucket.end, let high = bucket.end ?? bucket.start,
            low.isFinite, high.isFinite
        else { return }
        let source = id(name: source)
        buckets[Keyed(cell: cell, key: BucketRef(source: source, start: low, end: high)), default: 0]
            .addSaturating(bucket.count)
    }

    mutating func addDiagnostic(cell: Cell, kind: String, group: Int64) {
        diagnostics[Keyed(cell: id(cell), key: DiagnosticKey(kind: kind, group: group)), default: 0] += 1
    }

    /// `rows` sorted by their cell's rank, then their own key (the upserts' lock order).
    static func inKeyOrder<Key: Comparable>(_ rows: [Keyed<Key>: Int64], rank: [Int32]) -> [(
        key: Keyed<Key>, value: Int64
    )] {
        rows.sorted { a, b in
            a.key.cell == b.key.cell ? a.key.key < b.key.key : rank[Int(a.key.cell)] < rank[Int(b.key.cell)]
        }
    }

    /// Upserts counts keyed by cell and a pair as one row per cell into `table`: the pair's two
    /// array `columns` (element `types`) and `counts`, gathered per cell by `array_agg` and
    /// merged into a stored cell by the SQL function `merge` (same pair: counts summed).
    private func upsertPacked<Key: Comparable, A: PostgresArrayEncodable, B: PostgresArrayEncodable>(
        _ counted: [Keyed<Key>: Int64], into table: String, columns: (String, String), types: (String, String),
        merge: String, keys: (Key) -> (A, B), app: Int64, rank: [Int32], all: Columns,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !counted.isEmpty else { return }
        let rows = Self.inKeyOrder(counted, rank: rank)
        let cells = rows.map { $0.key.cell + 1 }
        let pairs = rows.map { keys($0.key.key) }
        let (firsts, seconds) = (pairs.map(\.0), pairs.map(\.1))
        let counts = rows.map(\.value)
        let (a, b) = columns
        try await connection.query(
            """
            INSERT INTO \(unescaped: table) (app, day, version, os, device, \(unescaped: a), \(unescaped: b), counts)
            SELECT \(app), k.d::date, k.v, k.o, k.e, array_agg(x.a ORDER BY x.n), array_agg(x.b ORDER BY x.n),
                array_agg(x.c ORDER BY x.n)
            FROM unnest(\(PackedArray(cells))::int[], \(firsts)::\(unescaped: types.0)[], \(seconds)::\(unescaped: types.1)[],
                \(PackedArray(counts))::bigint[]) WITH ORDINALITY AS x (i, a, b, c, n)
            JOIN \(cellsOf: all) ON k.i = x.i
            GROUP BY x.i, k.d, k.v, k.o, k.e
            ORDER BY min(x.n)
            ON CONFLICT (app, day, version, os, device) DO UPDATE SET (\(unescaped: a), \(unescaped: b), counts) = (
                SELECT m.\(unescaped: a), m.\(unescaped: b), m.counts FROM \(unescaped: merge)(
                    \(unescaped: table).\(unescaped: a), \(unescaped: table).\(unescaped: b), \(unescaped: table).counts,
                    excluded.\(unescaped: a), excluded.\(unescaped: b), excluded.counts) AS m)
            """, logger: logger)
    }

    /// Adds these rows at the version level (migration `postgres/0012`: OS and device '') to `rows`.
    func addByVersion(into rows: inout RollupRows) {
        let coarse = cells.map { rows.id(Cell(day: $0.day, version: $0.version, os: "", device: "")) }
        let sources = names.map { rows.id(name: $0) }
        for (cell, value) in usage {
            let key = coarse[Int(cell)]
            rows.usage[key, default: Usage()].payloads += value.payloads
            rows.usage[key, default: Usage()].foreground += value.foreground
            rows.usage[key, default: Usage()].background += value.background
        }
        Self.add(exits, into: &rows.exits, cells: coarse)
        Self.add(signposts, into: &rows.signposts, cells: coarse)
        Self.add(buckets, into: &rows.buckets, cells: coarse) {
            BucketRef(source: sources[Int($0.source)], start: $0.start, end: $0.end)
        }
        Self.add(diagnostics, into: &rows.diagnostics, cells: coarse)
    }

    /// The tables folded per day, OS and device too (suffix `_od`, ``addExitsByOSAndDevice(into:)``).
    static let osDeviceTables: Set<String> = ["exit_cells"]

    /// Adds the exits alone per day, OS and device (migration `postgres/0020`: version '') to `rows`.
    func addExitsByOSAndDevice(into rows: inout RollupRows) {
        let coarse = cells.map { rows.id(Cell(day: $0.day, version: "", os: $0.os, device: $0.device)) }
        Self.add(exits, into: &rows.exits, cells: coarse)
    }

    /// Adds `counts` to `sums`, each row's cell replaced by `cells[its cell]` (a coarser level's)
    /// and its key by `key`'s. Empty, `sums` is sized first, for as many rows per coarser cell as
    /// `counts` has per cell (grown by doubling, it was 2.4 % of the leader's CPU; sized for every
    /// row of `counts`, it held ~30 MB at the version level).
    private static func add<Key: Hashable>(
        _ counts: [Keyed<Key>: Int64], into sums: inout [Keyed<Key>: Int64], cells: [Int32],
        key: (Key) -> Key = { $0 }
    ) {
        if sums.isEmpty, let coarsest = cells.max() {
            sums.reserveCapacity(counts.count * (Int(coarsest) + 1) / max(1, cells.count))
        }
        for (row, count) in counts { sums[Keyed(cell: cells[Int(row.cell)], key: key(row.key)), default: 0] += count }
    }

    /// Upserts every table's rows, in key order, at every level (the fine cells, the version-level
    /// ones, then the exits per OS and device).
    func flush(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await flushFine(app: app, on: connection, logger: logger)
        var coarse = CoarseRollups()
        coarse.add(self)
        try await coarse.flush(app: app, on: connection, logger: logger)
    }

    /// Upserts the fine cells' rows alone (their coarser levels: ``CoarseRollups``).
    func flushFine(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await flush(app: app, suffix: "", on: connection, logger: logger)
    }

    /// Upserts every table's rows into the tables named with `suffix`, in key order.
    fileprivate func flush(app: Int64, suffix: String, on connection: PostgresConnection, logger: Logger) async throws {
        // Each interned cell's rank in sorted order: the lock order of the upserts.
        let rank = cellTable.ranks
        // Every interned cell once; rows name theirs by index (1-based, as `WITH ORDINALITY`
        // counts): each row carrying its cell's four strings made encoding the arrays a fifth of
        // the fold's CPU.
        let all = Columns(cells)
        if !usage.isEmpty {
            let rows = usage.sorted { rank[Int($0.key)] < rank[Int($1.key)] }
            let cells = rows.map { $0.key + 1 }
            let payloads = rows.map(\.value.payloads)
            let foreground = rows.map(\.value.foreground)
            let background = rows.map(\.value.background)
            try await connection.query(
                """
                INSERT INTO usage_rollup\(unescaped: suffix) (app, day, version, os, device, payloads, foreground_ms, background_ms)
                SELECT \(app), k.d::date, k.v, k.o, k.e, x.p, x.f, x.b
                FROM unnest(\(PackedArray(cells))::int[], \(PackedArray(payloads))::bigint[], \(PackedArray(foreground))::float8[], \(PackedArray(background))::float8[])
                    WITH ORDINALITY AS x (i, p, f, b, n)
                JOIN \(cellsOf: all) ON k.i = x.i
                ORDER BY x.n
                ON CONFLICT (app, day, version, os, device) DO UPDATE SET
                    payloads = usage_rollup\(unescaped: suffix).payloads + excluded.payloads,
                    foreground_ms = usage_rollup\(unescaped: suffix).foreground_ms + excluded.foreground_ms,
                    background_ms = usage_rollup\(unescaped: suffix).background_ms + excluded.background_ms
                """, logger: logger)
        }
        // Exits and signpost totals: one row per cell, three arrays (migrations postgres/0017, 0018).
        try await upsertPacked(
            exits, into: "exit_cells" + suffix, columns: ("states", "reasons"), types: ("smallint", "text"),
            merge: "ll_merge_exits", keys: { ($0.state, $0.reason) }, app: app, rank: rank, all: all,
            on: connection, logger: logger)
        try await upsertPacked(
            signposts, into: "signpost_cells" + suffix, columns: ("categories", "names"), types: ("text", "text"),
            merge: "ll_merge_signposts", keys: { ($0.first, $0.second) }, app: app, rank: rank, all: all,
            on: connection, logger: logger)
        if !buckets.isEmpty {
            try await flushBuckets(app: app, suffix: suffix, rank: rank, on: connection, logger: logger)
        }
        if !diagnostics.isEmpty {
            let rows = Self.inKeyOrder(diagnostics, rank: rank)
            let cells = rows.map { $0.key.cell + 1 }
            let kinds = rows.map(\.key.key.kind)
            let groups = rows.map(\.key.key.group)
            let counts = rows.map(\.value)
            try await connection.query(
                """
                INSERT INTO diagnostic_rollup\(unescaped: suffix) (app, day, version, os, device, kind, crash_group, count)
                SELECT \(app), k.d::date, k.v, k.o, k.e, x.t, x.g, x.c
                FROM unnest(\(PackedArray(cells))::int[], \(kinds)::text[], \(PackedArray(groups))::bigint[], \(PackedArray(counts))::bigint[])
                    WITH ORDINALITY AS x (i, t, g, c, n)
                JOIN \(cellsOf: all) ON k.i = x.i
                ORDER BY x.n
                ON CONFLICT (app, day, version, os, device, kind, crash_group) DO UPDATE SET
                    count = diagnostic_rollup\(unescaped: suffix).count + excluded.count
                """, logger: logger)
        }
    }

    /// The cell columns, as arrays for `unnest`.
    struct Columns {
        var days: [String] = []
        var versions: [String] = []
        var oses: [String] = []
        var devices: [String] = []

        init(_ cells: [Cell]) {
            for cell in cells {
                days.append(cell.day)
                versions.append(cell.version)
                oses.append(cell.os)
                devices.append(cell.device)
            }
        }
    }
}

extension PostgresQuery.StringInterpolation {
    /// The cells of a statement as a table `k (d, v, o, e, i)`: day, version, OS, device and the
    /// 1-based index its rows name them by (each cell's strings are sent once, not per row).
    mutating func appendInterpolation(cellsOf cells: RollupRows.Columns) {
        appendLiteral("unnest(")
        appendInterpolation(cells.days)
        appendLiteral("::text[], ")
        appendInterpolation(cells.versions)
        appendLiteral("::text[], ")
        appendInterpolation(cells.oses)
        appendLiteral("::text[], ")
        appendInterpolation(cells.devices)
        appendLiteral("::text[]) WITH ORDINALITY AS k (d, v, o, e, i)")
    }
}

/// The coarser levels of a fold batch's rollup rows (the version level; the exits per OS and
/// device), summed across the batch's parts and upserted once per batch. A batch's fine rows are
/// written part by part, so their memory is bounded by a part's documents; the coarser rows are
/// upserted once per batch, as before the parts (each upsert reads, merges and rewrites the
/// stored rows).
struct CoarseRollups {
    private var byVersion = RollupRows()
    private var byOSAndDevice = RollupRows()

    /// Adds the coarser levels of `fine` (one part's rows).
    mutating func add(_ fine: RollupRows) {
        fine.addByVersion(into: &byVersion)
        fine.addExitsByOSAndDevice(into: &byOSAndDevice)
    }

    /// Upserts the version-level rows, then the exits per OS and device.
    func flush(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await byVersion.flush(app: app, suffix: "_v", on: connection, logger: logger)
        try await byOSAndDevice.flush(app: app, suffix: "_od", on: connection, logger: logger)
    }
}
