import ArgumentParser
import Foundation
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSQLite
import Logging
import NIOCore

/// `lifeline bench …`: measurements recorded in BENCHMARKS.md. Run them on a release build.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks (run on a release build; figures go to BENCHMARKS.md).",
        subcommands: [IngestFloor.self, ExplorerFold.self, BenchQueryCommand.self, BenchHostileCommand.self]
    )

    /// The in-process floor: gunzip + decode + hash + group-committed insert, no HTTP.
    struct IngestFloor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ingest-floor",
            abstract: "Measure the in-process ingest floor over a payload file made by shared/bench/make_payloads.py.",
            discussion: """
                Stages are timed separately on one core (gunzip, decode, hash + raw copy), then the whole \
                path runs with --concurrency tasks feeding the group-commit writer into a fresh database, \
                as the server does. Prints payloads/s for each.
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var file: PayloadFile

        @Option(help: "Concurrent tasks preparing and submitting payloads.")
        var concurrency = 32

        @Option(help: "SQLite synchronous mode for the run: full or normal.")
        var synchronous: SynchronousMode = .full

        @Option(help: "SQLite page size of the fresh database (bytes; default: the store's).")
        var pageSize: Int?

        @Flag(help: "Prepare concurrently but do not insert (isolates the CPU side of the floor).")
        var prepareOnly = false

        func run() async throws {
            let bodies = try file.records()
            printError(
                "\(bodies.count) payloads, \(bodies.reduce(0) { $0 + $1.readableBytes } / bodies.count) B gzip on average"
            )
            let pipeline = IngestPipeline()
            let app = file.app

            // Stage timings, single core.
            var inflated: [ByteBuffer] = []
            let inflate = try measure(bodies.count) {
                inflated = try bodies.map { try pipeline.inflate($0) }
            }
            let decode = try measure(bodies.count) {
                for body in inflated {
                    _ = try body.withUnsafeReadableBytes { raw in
                        try MetricKitDecoder.decode(raw, family: .metric)
                    }
                }
            }
            let prepare = try measure(bodies.count) {
                for body in bodies {
                    _ = try pipeline.prepare(body: body, encoding: .gzip, family: .metric, app: app, receivedAt: 0)
                }
            }
            print(String(format: "gunzip only:                    %8.0f payloads/s", inflate))
            print(String(format: "decode only:                    %8.0f payloads/s", decode))
            print(String(format: "prepare (gunzip+decode+hash):   %8.0f payloads/s", prepare))

            // The whole path into a fresh database.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "lifeline-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("bench.sqlite").path
            var options = Database.Options()
            options.synchronous = synchronous.store
            if let pageSize { options.pageSize = pageSize }
            let database = try Database(path: path, options: options)
            defer { database.checkpointForExit() }
            try database.migrate()
            let writer = try IngestWriter(database: database, logger: Logger(label: "bench"))
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                let stride = concurrency
                let prepareOnly = self.prepareOnly
                for lane in 0..<stride {
                    group.addTask {
                        var index = lane
                        while index < bodies.count {
                            let items = try pipeline.prepare(
                                body: bodies[index], encoding: .gzip, family: .metric, app: app, receivedAt: 0)
                            if !prepareOnly {
                                _ = try await writer.submit(IngestRequest(app: app, items: items, idempotencyKey: nil))
                            }
                            index += stride
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = ContinuousClock.now - started
            let statistics = writer.statistics
            await writer.shutdown()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let stored = try database.payloadCount(app: app, kind: .metric)
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            print(
                String(
                    format: "floor (prepare + insert, %@): %8.0f payloads/s  (%d stored, %.0f B/payload on disk)",
                    synchronous.rawValue, Double(bodies.count) / seconds, stored,
                    Double(bytes) / Double(max(stored, 1))))
            print(
                "writer: \(statistics.transactions) transactions, \(statistics.requests) requests, "
                    + "largest batch \(statistics.largestBatch) requests")
        }

        /// Runs `body` once and returns `count` per second.
        func measure(_ count: Int, _ body: () throws -> Void) throws -> Double {
            let started = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return Double(count) / seconds
        }
    }

    /// The explorer's fold of metric documents in memory, by step (`ExplorerFoldBenchmark`).
    struct ExplorerFold: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explorer-fold",
            abstract: "Measure what the metrics explorer's fold costs per document, in memory.",
            discussion: """
                Decodes the payloads of a file made by shared/bench/make_payloads.py or \
                Benchmarks/make-fleet-payloads.sh, then times on one thread, --runs times: extracting \
                their explorer observations; extracting and adding them to the rows of both levels (the \
                explorer thread's job per document); replaying the rows' observations into their \
                cells; encoding the rows made; both as a prepare writes new rows (one payload's \
                samples straight from their bytes); merging each row into its own bytes, \
                and each version row of the payloads' second half into the first half's, as a prepare \
                merges rows that are stored already. Prints the median of each in microseconds per \
                document.
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var file: PayloadFile
        @Option(help: "Payloads read from the start of the file at most.")
        var count = 20_000
        @Option(help: "Passes over the payloads (the median is printed).")
        var runs = 5

        func run() async throws {
            guard count > 0, runs > 0 else { throw ValidationError("--count and --runs must be positive") }
            let bodies = try file.records().prefix(count)
            let pipeline = IngestPipeline()
            let items = try bodies.flatMap {
                try pipeline.prepare(body: $0, encoding: .gzip, family: .metric, app: file.app, receivedAt: 0)
            }
            var passes: [ExplorerFoldBenchmark.Pass] = []
            for run in 1...runs {
                let pass = try ExplorerFoldBenchmark.run(items)
                printError("pass \(run)/\(runs): \(pass.documents) documents")
                passes.append(pass)
            }
            guard let first = passes.first, first.documents > 0 else {
                throw CommandError("no device-day metric payload")
            }
            func median(_ step: (ExplorerFoldBenchmark.Pass) -> Duration) -> Double {
                let sorted = passes.map { step($0) / .microseconds(1) }.sorted()
                return sorted[sorted.count / 2] / Double(first.documents)
            }
            print(
                "\(first.documents) documents, \(first.observations / first.documents) observations each; "
                    + "rows: \(first.fineRows) fine, \(first.versionRows) version-level (their observations "
                    + "\(first.pendingBytes.fine / first.documents) + \(first.pendingBytes.byVersion / first.documents) "
                    + "bytes per document)")
            print(String(format: "extract:        %7.2f µs per document (median of %d)", median(\.extract), runs))
            print(String(format: "extract + add:  %7.2f µs per document", median(\.add)))
            print(
                String(
                    format: "replay rows:    %7.2f µs per document (their observations into cells)", median(\.replay)))
            print(String(format: "encode rows:    %7.2f µs per document", median(\.encode)))
            print(
                String(
                    format: "rows as new:    %7.2f µs per document (replay + encode as a prepare writes new rows)",
                    median(\.asNew)))
            print(String(format: "merge rows:     %7.2f µs per document (each into its own bytes)", median(\.merge)))
            let merges = passes.map { $0.versionMerge.time / .microseconds(1) / Double(max(1, $0.versionMerge.rows)) }
            print(
                String(
                    format: "merge versions: %7.2f µs per row (%d rows of the second half into the first's)",
                    merges.sorted()[merges.count / 2], first.versionMerge.rows))
        }
    }

    /// The payload file a benchmark reads, and the app its payloads carry.
    struct PayloadFile: ParsableArguments {
        @Option(help: "Payload file: records of [4-byte big-endian length][gzip body].")
        var payloads: String

        @Option(help: "Bundle identifier the payloads carry (make_payloads.py --bundle).")
        var app = "com.example.app"

        /// The file's records; throws when it holds none.
        func records() throws -> [ByteBuffer] {
            let bodies = try Self.readRecords(payloads)
            guard !bodies.isEmpty else { throw CommandError("\(payloads) holds no records") }
            return bodies
        }

        private static func readRecords(_ path: String) throws -> [ByteBuffer] {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw CommandError("\(path): cannot be read (\(error.localizedDescription))")
            }
            var records: [ByteBuffer] = []
            var position = 0
            while position + 4 <= data.count {
                let length = data[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
                position += 4
                guard position + length <= data.count else { throw CommandError("\(path): truncated record") }
                records.append(ByteBuffer(bytes: data[position..<position + length]))
                position += length
            }
            return records
        }
    }
}
