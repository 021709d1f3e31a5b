import ArgumentParser
import Foundation
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineSQLite
import Logging
import NIOCore

/// `lifeline migrate-data`: moves an installation from its SQLite file to PostgreSQL.
struct MigrateDataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-data",
        abstract: "Copy every stored document of a SQLite database into a PostgreSQL database.",
        discussion: """
            Each raw document kept in the SQLite file is decoded again and written through the \\
            PostgreSQL store's ingest path, in batches, so the PostgreSQL rollups are built by the same \\
            code as live ingest (same answers). Documents already in PostgreSQL count as duplicates: an \\
            interrupted run can be started again. Documents whose raw bytes retention already removed \\
            (older than retention.raw_days) cannot be moved and are counted. Keys, alert state and debug \\
            symbols are not moved: create keys on the new database with `lifeline keys create --db URL`.
            """
    )

    @Option(help: "The SQLite database file to read (not modified).")
    var from: String

    @Option(help: "The PostgreSQL URL to write to (postgres://user@host:5432/db).")
    var to: String

    @Option(help: "Documents per transaction.")
    var batch = 200

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .warning

    func validate() throws {
        guard PostgresLocation.isURL(to) else { throw ValidationError("--to must be a postgres:// URL") }
        guard !PostgresLocation.isURL(from) else { throw ValidationError("--from must be a SQLite file") }
        guard (1...5_000).contains(batch) else { throw ValidationError("--batch must be 1…5000") }
    }

    func run() async throws {
        guard FileManager.default.fileExists(atPath: from) else { throw CommandError("no database at \(from)") }
        let source = try Database(path: from)
        defer { source.checkpointForExit() }
        var global = try GlobalOptions.parse(["--db", to])
        global.logLevel = logLevel
        let store = try await global.openPostgres(logger: global.makeLogger())
        do {
            try await copy(from: source, to: store, target: global.dbDescription)
            // The copied documents are appended; fold them now rather than at the first read.
            try await store.foldAll()
        } catch {
            await store.shutdown()
            throw error
        }
        await store.shutdown()
    }

    private func copy(from source: Database, to store: PostgresStore, target: String) async throws {
        let total = try source.query("SELECT count(*) FROM payloads").first?.first?.integer ?? 0
        let withoutRaw =
            try source.query(
                """
                SELECT count(*) FROM payloads p WHERE NOT EXISTS (SELECT 1 FROM payload_raw r WHERE r.payload = p.id)
                    AND NOT EXISTS (SELECT 1 FROM payload_raw_packed k WHERE k.payload = p.id)
                """
            )
            .first?.first?.integer ?? 0
        printError("migrate-data: \(total) documents in \(from) → \(target)")
        let progress = Progress(total: Int(total), label: "migrate-data")
        let pipeline = IngestPipeline()
        var after: Int64 = 0
        var summary = (accepted: 0, duplicates: 0, refused: 0)
        let dictionaries = RawDictionaryCache()
        while true {
            let rows = try source.query(
                """
                SELECT p.id, a.bundle_id, p.kind, p.received_at_ms, coalesce(r.raw, k.raw) FROM payloads p
                JOIN apps a ON a.id = p.app LEFT JOIN payload_raw r ON r.payload = p.id
                LEFT JOIN payload_raw_packed k ON k.payload = p.id
                WHERE p.id > ?1 AND coalesce(r.raw, k.raw) IS NOT NULL ORDER BY p.id LIMIT ?2
                """, [.integer(after), .integer(Int64(batch))])
            guard let last = rows.last?.first?.integer else { break }
            after = last
            var requests: [String: [IngestItem]] = [:]
            for row in rows {
                guard case .text(let app) = row[1], case .text(let kind) = row[2], case .integer(let received) = row[3],
                    case .blob(let raw) = row[4]
                else { continue }
                do {
                    // A copy the SQLite server deflated against a dictionary (migration 0023) is
                    // inflated here: PostgreSQL keeps copies as gzip.
                    var body = raw
                    if RawCopy.dictionaryID(raw) != nil {
                        body = try RawCopy.json(of: raw, maxBytes: pipeline.limits.maxDecompressedBytes) { id in
                            dictionaries.dictionary(id, in: source)
                        }
                    }
                    let items = try pipeline.prepare(
                        body: ByteBuffer(bytes: body), encoding: RawCopy.isGzip(body) ? .gzip : .identity,
                        family: kind == "metric" ? .metric : .diagnostic, app: app, receivedAt: received)
                    requests[app, default: []] += items
                } catch {
                    summary.refused += 1
                    progress.interrupt("document \(row[0]) no longer decodes: \(error)")
                }
                progress.advance()
            }
            for (app, items) in requests.sorted(by: { $0.key < $1.key }) {
                let outcome = try await store.write(IngestRequest(app: app, items: items))
                summary.accepted += outcome.accepted
                summary.duplicates += outcome.duplicates
            }
        }
        progress.finish()
        print(
            "documents copied: \(summary.accepted), already there: \(summary.duplicates), refused: \(summary.refused), "
                + "without raw bytes (pruned, not copied): \(withoutRaw)")
    }
}
