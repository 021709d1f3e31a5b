import LifelineAnalysis
import LifelineModel
import PostgresNIO

/// The explorer cells of one fold batch (or refold batch), merged per row in memory, then merged
/// into the stored rows at both levels (`explorer_cells`, `explorer_cells_v`, migrations
/// postgres/0014 and 0015): the fine rows after each part of the batch
/// (``flushFine(app:on:logger:)``), the version-level ones once, at its end. One row per app, day,
/// version, OS, device, app state and category holds the category's metrics' cells
/// (``ExplorerCellMap``). One statement reads the stored
/// maps of the batch's rows, Swift merges each batch row into its stored bytes
/// (``ExplorerCellMapBuilder/merged(into:)``: the stored cells the batch does not touch are copied
/// undecoded, as SQLite's writer merges), one `INSERT … SELECT FROM unnest … ON CONFLICT DO
/// UPDATE` writes them back. Only the fold's lock holder writes these rows, so nothing changes
/// between the read and the write. The cells are the SQLite store's (`ExplorerStage`), so both
/// stores answer the same.
struct ExplorerRows: Sendable {
    /// A row's key: its cell (interned per level, ``cells``) and its app state's and category's
    /// names (interned, ``names``). Six strings per key, hashed twice per observation and compared
    /// by a sort in the flush, were a tenth of the leader's CPU on the reference load
    /// (BENCHMARKS.md, "The leader's fold keyed by numbers").
    struct Key: Hashable, Sendable {
        var cell: Int32
        var appState: Int32
        var category: Int32
    }

    /// Fine rows, then version-level ones (OS and device '').
    private(set) var levels: [[Key: ExplorerCellMapBuilder]] = [[:], [:]]
    /// Each level's cells, by their id in ``Key/cell``.
    private var cells = [Interned<RollupRows.Cell>(), Interned<RollupRows.Cell>()]
    /// App states' and categories' names, by their id in ``Key``.
    private var names = Interned<String>()

    /// Adds one metric document's observations in its rollup cell.
    mutating func add(_ metric: MetricPayload, cell: RollupRows.Cell) {
        let extraction = ExplorerExtractor.extract(metric)
        guard extraction.isDeviceDay else { return }
        let fine = cells[0].id(cell)
        let byVersion = cells[1].id(RollupRows.Cell(day: cell.day, version: cell.version, os: "", device: ""))
        for observation in extraction.observations {
            let category = observation.ordinal.map { ExplorerCatalog.metrics[$0].category }
            let categoryID = names.id(
                category?.rawValue ?? String(ExplorerCatalog.categoryKey(ofMetric: observation.metric)))
            var key = Key(cell: fine, appState: names.id(observation.appState), category: categoryID)
            let entry = ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject)
            // Checked and reduced once for both levels.
            let sample = ExplorerCell.prepare(observation.sample)
            levels[0][key, default: ExplorerCellMapBuilder(category: category)]
                .add(sample, at: entry, ordinal: observation.ordinal)
            key.cell = byVersion
            levels[1][key, default: ExplorerCellMapBuilder(category: category)]
                .add(sample, at: entry, ordinal: observation.ordinal)
        }
    }

    /// A batch row's cells merged into its stored ones (none: its own). A stored row that does not
    /// decode (a damaged database) is replaced by the batch's; `lifeline refold` rebuilds it.
    private static func cells(
        of builder: ExplorerCellMapBuilder, into stored: ByteBuffer?, day: String, logger: Logger
    ) -> [UInt8] {
        guard let stored else { return builder.encoded() }
        guard let cells = try? builder.merged(into: stored.readableBytesView) else {
            logger.error("undecodable explorer cells replaced", metadata: ["day": "\(day)"])
            return builder.encoded()
        }
        return cells
    }

    /// Merges the fine rows into the stored ones of `app`, then forgets them (and their cells):
    /// the version-level rows stay, summed across a fold batch's parts until
    /// ``flushVersionLevel(app:on:logger:)``.
    mutating func flushFine(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await flush(app: app, level: 0, on: connection, logger: logger)
        levels[0] = [:]
        cells[0] = Interned()
    }

    /// Merges the version-level rows into the stored ones of `app`.
    func flushVersionLevel(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await flush(app: app, level: 1, on: connection, logger: logger)
    }

    /// Rows merged per statement pair (read back, written): a fold batch's version-level rows,
    /// ~3,600 on the reference load, were read back, merged and encoded at once, ~20 MB of the
    /// leader's peak with a backlog (BENCHMARKS.md, "A PostgreSQL node's malloc").
    static let flushChunk = 512

    /// Merges one level's rows into the stored ones of `app`, in key order, ``flushChunk`` rows
    /// at a time: the cells and names ranked once, the rows sorted by their ranks. Unsorted,
    /// PostgreSQL spent ~10 % more per document on the inserts (every row a leaf page of its own);
    /// sorted by their six strings, the sort was 5 % of the leader's CPU.
    private func flush(app: Int64, level: Int, on connection: PostgresConnection, logger: Logger) async throws {
        let nameRanks = names.ranks
        let rows = levels[level]
        guard !rows.isEmpty else { return }
        let cellRanks = cells[level].ranks
        let unsorted = Array(rows)
        // Their indexes sorted, not the (key, builder) pairs: moving the builders through a
        // sort retained and released their every array (6 % of the leader's CPU).
        let entries = unsorted.indices.sorted { a, b in
            let (x, y) = (unsorted[a].key, unsorted[b].key)
            return (cellRanks[Int(x.cell)], nameRanks[Int(x.appState)], nameRanks[Int(x.category)])
                < (cellRanks[Int(y.cell)], nameRanks[Int(y.appState)], nameRanks[Int(y.category)])
        }.map { unsorted[$0] }
        for start in stride(from: 0, to: entries.count, by: Self.flushChunk) {
            let chunk = entries[start..<min(entries.count, start + Self.flushChunk)]
            try await flush(chunk, app: app, level: level, on: connection, logger: logger)
        }
    }

    /// Merges `entries` (in key order) into the stored rows of `app` at `level`.
    private func flush(
        _ entries: ArraySlice<(key: Key, value: ExplorerCellMapBuilder)>, app: Int64, level: Int,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let table = level == 0 ? "explorer_cells" : "explorer_cells_v"
        let keyCells = entries.map { cells[level].values[Int($0.key.cell)] }
        let days = keyCells.map(\.day)
        let versions = keyCells.map(\.version)
        let oses = keyCells.map(\.os)
        let devices = keyCells.map(\.device)
        let states = entries.map { names.values[Int($0.key.appState)] }
        let categories = entries.map { names.values[Int($0.key.category)] }
        // The keys spelled out per row: through the cells' and names' tables, the planner may
        // not reach the primary key. A stored row comes back with its key and finds its batch
        // row through the ids (numbered by `WITH ORDINALITY`, 10,000 keys over 100,000 rows
        // read in 250 ms against 215). Each key is a probe of the primary key (a LATERAL
        // subquery): joined as a table, the planner merged every stored row of the app, ~85 ms a
        // statement on the reference load and growing with the table, against ~28 ms
        // (BENCHMARKS.md, "The leader's fold in parts").
        let positions = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
        var stored: [Int: ByteBuffer] = [:]
        for try await (day, version, os, device, state, category, bytes) in try await connection.query(
            """
            SELECT k.day::text, k.version, k.os, k.device, k.app_state, k.category, e.cells
            FROM unnest(\(days)::text[]::date[], \(versions)::text[], \(oses)::text[], \(devices)::text[],
                \(states)::text[], \(categories)::text[]) AS k (day, version, os, device, app_state, category)
            CROSS JOIN LATERAL (
                SELECT x.cells FROM \(unescaped: table) x
                WHERE x.app = \(app) AND x.day = k.day AND x.version = k.version AND x.os = k.os
                    AND x.device = k.device AND x.app_state = k.app_state AND x.category = k.category
                LIMIT 1) e
            """, logger: logger
        ).decode((String, String, String, String, String, String, ByteBuffer).self) {
            let cell = RollupRows.Cell(day: day, version: version, os: os, device: device)
            guard let cellID = cells[level].id(of: cell), let stateID = names.id(of: state),
                let categoryID = names.id(of: category),
                let position = positions[Key(cell: cellID, appState: stateID, category: categoryID)]
            else { continue }
            stored[position] = bytes
        }
        var merged: [ByteBuffer] = []
        merged.reserveCapacity(entries.count)
        for (position, (_, builder)) in entries.enumerated() {
            merged.append(
                ByteBuffer(
                    bytes: Self.cells(of: builder, into: stored[position], day: days[position], logger: logger)))
            // The leader merges beside its rollups: other tasks (the door's requests) get
            // the thread between rows.
            if position % 64 == 63 { await Task.yield() }
        }
        try await connection.query(
            """
            INSERT INTO \(unescaped: table) (app, day, version, os, device, app_state, category, cells)
            SELECT \(app), * FROM unnest(\(days)::text[]::date[], \(versions)::text[], \(oses)::text[],
                \(devices)::text[], \(states)::text[], \(categories)::text[], \(merged)::bytea[])
            ON CONFLICT (app, day, version, os, device, app_state, category) DO UPDATE SET cells = excluded.cells
            """, logger: logger)
    }
}
