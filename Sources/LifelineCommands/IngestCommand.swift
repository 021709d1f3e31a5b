import ArgumentParser
import Foundation
import LifelineIngest
import LifelinePostgres
import LifelineSQLite

/// `lifeline ingest`: offline import of payload files through the same decoder and writer as the
/// HTTP endpoints (backfills, migrations from another tool).
struct IngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Import MetricKit payload files (.json or gzip, any of the four shapes) into the database.",
        discussion: """
            Each FILE may be a metric payload, a diagnostic payload, a bare diagnostic or a JSON \
            array of payloads, plain or gzip (detected from the content). Directories are walked \
            for *.json and *.json.gz files. Documents already stored are counted as duplicates, \
            so an import can be re-run safely. Exit code 1 if any file was refused.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Bundle identifier to store the payloads under; a document naming another app is refused.")
    var app: String

    @Option(help: "Files imported concurrently (their writes are grouped into shared transactions).")
    var concurrency = 8

    @Argument(help: "Payload files or directories.")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one FILE") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1…256") }
    }

    func run() async throws {
        let logger = global.makeLogger()
        let paths = try Self.expand(files)
        let postgres = global.isPostgres ? try await global.openPostgres(logger: logger) : nil
        var sqliteWriter: IngestWriter?
        if postgres == nil {
            let database = try Database(path: global.db)
            defer { database.checkpointForExit() }
            try database.migrate()
            sqliteWriter = try IngestWriter(database: database, logger: logger)
        }
        guard let writer: any DocumentWriter = postgres ?? sqliteWriter else { return }
        let ingestor = Ingestor(writer: writer)
        let app = self.app
        var summary = (files: 0, accepted: 0, duplicates: 0, failed: 0)
        let progress = Progress(total: paths.count, label: "ingest")

        await withTaskGroup(of: (String, Result<IngestOutcome, any Error>).self) { group in
            var next = 0
            func startNext() {
                guard next < paths.count else { return }
                let path = paths[next]
                next += 1
                group.addTask {
                    do {
                        return (path, .success(try await ingestor.ingest(file: path, app: app)))
                    } catch {
                        return (path, .failure(error))
                    }
                }
            }
            for _ in 0..<concurrency { startNext() }
            for await (path, result) in group {
                summary.files += 1
                switch result {
                case .success(let outcome):
                    summary.accepted += outcome.accepted
                    summary.duplicates += outcome.duplicates
                case .failure(let error):
                    summary.failed += 1
                    progress.interrupt("refused \(path): \(error)")
                }
                progress.advance()
                startNext()
            }
        }
        progress.finish()
        await sqliteWriter?.shutdown()
        await postgres?.shutdown()
        print(
            "files: \(summary.files), documents accepted: \(summary.accepted), duplicates: \(summary.duplicates), files refused: \(summary.failed)"
        )
        if summary.failed > 0 { throw ExitCode(1) }
    }

    /// Files as given, directories walked for `*.json` / `*.json.gz` / `*.gz`, sorted for a stable order.
    static func expand(_ arguments: [String]) throws -> [String] {
        var paths: [String] = []
        let fm = FileManager.default
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                throw CommandError("no such file: \(argument)")
            }
            guard isDirectory.boolValue else {
                paths.append(argument)
                continue
            }
            let enumerator = fm.enumerator(atPath: argument)
            var found: [String] = []
            while let relative = enumerator?.nextObject() as? String {
                if relative.hasSuffix(".json") || relative.hasSuffix(".gz") {
                    found.append((argument as NSString).appendingPathComponent(relative))
                }
            }
            paths.append(contentsOf: found.sorted())
        }
        return paths
    }
}
