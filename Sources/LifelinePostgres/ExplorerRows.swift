import LifelineAnalysis
import LifelineModel
import PostgresNIO

/// The explorer cells of one fold batch (or refold batch), merged per row in memory, then merged
/// into the stored rows at both levels (`explorer_cells`, `explorer_cells_v`, migrations
/// postgres/0014 and 0015): one row per app, day, version, OS, device, app state and category
/// holding the category's metrics' cells (``ExplorerCellMap``). One statement reads the stored
/// maps of the batch's rows, Swift merges each batch row into its stored bytes
/// (``ExplorerCellMapBuilder/merged(into:)``: the stored cells the batch does not touch are copied
/// undecoded, as SQLite's writer merges), one `INSERT … SELECT FROM unnest … ON CONFLICT DO
/// UPDATE` writes them back. Only the fold's lock holder writes these rows, so nothing changes
/// between the read and the write. The cells are the SQLite store's (`ExplorerStage`), so both
/// stores answer the same.
struct ExplorerRows {
    struct Key: Hashable, Comparable {
        var day: String
        var version: String
        var os: String
        var device: String
        var appState: String
        var category: String

        static func < (a: Key, b: Key) -> Bool {
            (a.day, a.version, a.os, a.device, a.appState, a.category)
                < (b.day, b.version, b.os, b.device, b.appState, b.category)
        }
    }

    /// Fine rows, then version-level ones (OS and device '').
    private(set) var levels: [[Key: ExplorerCellMapBuilder]] = [[:], [:]]

    /// Adds one metric document's observations in its rollup cell.
    mutating func add(_ metric: MetricPayload, cell: RollupRows.Cell) {
        let extraction = ExplorerExtractor.extract(metric)
        guard extraction.isDeviceDay else { return }
        for observation in extraction.observations {
            let category = observation.ordinal.map { ExplorerCatalog.metrics[$0].category }
            var key = Key(
                day: cell.day, version: cell.version, os: cell.os, device: cell.device,
                appState: observation.appState,
                category: category?.rawValue ?? String(ExplorerCatalog.categoryKey(ofMetric: observation.metric)))
            let entry = ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject)
            // Checked and reduced once for both levels.
            let sample = ExplorerCell.prepare(observation.sample)
            levels[0][key, default: ExplorerCellMapBuilder(category: category)]
                .add(sample, at: entry, ordinal: observation.ordinal)
            key.os = ""
            key.device = ""
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

    /// Merges the batch's rows into the stored ones of `app`, at both levels, in key order.
    func flush(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        for (table, rows) in zip(["explorer_cells", "explorer_cells_v"], levels) where !rows.isEmpty {
            // Their indexes sorted, not the (key, builder) pairs: moving the builders through a
            // sort retained and released their every array (6 % of the leader's CPU).
            let entries = Array(rows)
            let order = entries.indices.sorted { entries[$0].key < entries[$1].key }
            let keys = order.map { entries[$0].key }
            let days = keys.map(\.day)
            let versions = keys.map(\.version)
            let oses = keys.map(\.os)
            let devices = keys.map(\.device)
            let states = keys.map(\.appState)
            let categories = keys.map(\.category)
            var stored: [Key: ByteBuffer] = [:]
            for try await (day, version, os, device, state, category, bytes) in try await connection.query(
                """
                SELECT e.day::text, e.version, e.os, e.device, e.app_state, e.category, e.cells
                FROM \(unescaped: table) e
                JOIN unnest(\(days)::text[]::date[], \(versions)::text[], \(oses)::text[], \(devices)::text[],
                    \(states)::text[], \(categories)::text[]) AS k (day, version, os, device, app_state, category)
                    ON e.day = k.day AND e.version = k.version AND e.os = k.os AND e.device = k.device
                    AND e.app_state = k.app_state AND e.category = k.category
                WHERE e.app = \(app)
                """, logger: logger
            ).decode((String, String, String, String, String, String, ByteBuffer).self) {
                stored[
                    Key(day: day, version: version, os: os, device: device, appState: state, category: category)
                ] = bytes
            }
            var merged: [ByteBuffer] = []
            merged.reserveCapacity(order.count)
            for (position, index) in order.enumerated() {
                let (key, builder) = entries[index]
                merged.append(
                    ByteBuffer(bytes: Self.cells(of: builder, into: stored[key], day: key.day, logger: logger)))
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
}
