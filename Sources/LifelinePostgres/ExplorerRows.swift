import LifelineAnalysis
import LifelineModel
import PostgresNIO

/// The explorer cells of one fold batch (or refold batch), merged per key in memory, then merged
/// into the stored cells at both levels (`explorer_cells`, `explorer_cells_v`, migration
/// postgres/0014): one statement reads the stored cells of the batch's keys, Swift merges, one
/// `INSERT … SELECT FROM unnest … ON CONFLICT DO UPDATE` writes them back. Only the fold's lock
/// holder writes these rows, so nothing changes between the read and the write. The cells are
/// the SQLite store's (`ExplorerStage`), so both stores answer the same.
struct ExplorerRows {
    struct Key: Hashable, Comparable {
        var day: String
        var version: String
        var os: String
        var device: String
        var metric: String
        var subject: String
        var appState: String

        static func < (a: Key, b: Key) -> Bool {
            [a.day, a.version, a.os, a.device, a.metric, a.subject, a.appState].lexicographicallyPrecedes(
                [b.day, b.version, b.os, b.device, b.metric, b.subject, b.appState])
        }
    }

    /// Fine cells, then version-level ones (OS and device '').
    private(set) var levels: [[Key: ExplorerCell]] = [[:], [:]]

    var isEmpty: Bool { levels[0].isEmpty }

    /// Adds one metric document's observations in its rollup cell.
    mutating func add(_ metric: MetricPayload, cell: RollupRows.Cell) {
        let extraction = ExplorerExtractor.extract(metric)
        guard extraction.isDeviceDay else { return }
        for observation in extraction.observations {
            var key = Key(
                day: cell.day, version: cell.version, os: cell.os, device: cell.device, metric: observation.metric,
                subject: observation.subject, appState: observation.appState)
            levels[0][key, default: ExplorerCell()].add(observation.sample)
            key.os = ""
            key.device = ""
            levels[1][key, default: ExplorerCell()].add(observation.sample)
        }
    }

    /// Merges the batch's cells into the stored ones of `app`, at both levels, in key order.
    func flush(app: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        for (table, cells) in zip(["explorer_cells", "explorer_cells_v"], levels) where !cells.isEmpty {
            let keys = cells.keys.sorted()
            let days = keys.map(\.day)
            let versions = keys.map(\.version)
            let oses = keys.map(\.os)
            let devices = keys.map(\.device)
            let metrics = keys.map(\.metric)
            let subjects = keys.map(\.subject)
            let states = keys.map(\.appState)
            var stored: [Key: ExplorerCell] = [:]
            for try await (day, version, os, device, metric, subject, state, bytes) in try await connection.query(
                """
                SELECT e.day::text, e.version, e.os, e.device, e.metric, e.subject, e.app_state, e.cell
                FROM \(unescaped: table) e
                JOIN unnest(\(days)::text[]::date[], \(versions)::text[], \(oses)::text[], \(devices)::text[],
                    \(metrics)::text[], \(subjects)::text[], \(states)::text[])
                    AS k (day, version, os, device, metric, subject, app_state)
                    ON e.day = k.day AND e.version = k.version AND e.os = k.os AND e.device = k.device
                    AND e.metric = k.metric AND e.subject = k.subject AND e.app_state = k.app_state
                WHERE e.app = \(app)
                """, logger: logger
            ).decode((String, String, String, String, String, String, String, ByteBuffer).self) {
                let key = Key(
                    day: day, version: version, os: os, device: device, metric: metric, subject: subject,
                    appState: state)
                // A stored cell that does not decode (a damaged database) is replaced by the
                // batch's; `lifeline refold` rebuilds it.
                if let cell = try? ExplorerCell(decoding: bytes.readableBytesView) {
                    stored[key] = cell
                } else {
                    logger.error("undecodable explorer cell replaced", metadata: ["metric": "\(metric)"])
                }
            }
            let merged = keys.map { key in
                var cell = stored[key] ?? ExplorerCell()
                cell.merge(cells[key] ?? ExplorerCell())
                return ByteBuffer(bytes: cell.encoded())
            }
            try await connection.query(
                """
                INSERT INTO \(unescaped: table) (app, day, version, os, device, metric, subject, app_state, cell)
                SELECT \(app), * FROM unnest(\(days)::text[]::date[], \(versions)::text[], \(oses)::text[],
                    \(devices)::text[], \(metrics)::text[], \(subjects)::text[], \(states)::text[], \(merged)::bytea[])
                ON CONFLICT (app, day, version, os, device, metric, subject, app_state)
                DO UPDATE SET cell = excluded.cell
                """, logger: logger)
        }
    }
}
