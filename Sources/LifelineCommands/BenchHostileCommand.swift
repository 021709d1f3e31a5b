import ArgumentParser
import Foundation
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSQLite
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// `lifeline bench hostile`: what each adversarial body shape costs the ingest path (decode,
/// signature, hash, raw copy, storage), from 64 KB to the decompressed limit.
///
/// Every measurement runs in a child process of its own (this binary with `--one`), so its peak
/// resident memory is its own: the child builds the body, resets the kernel's high-water mark
/// (`/proc/self/clear_refs`), runs the body through ``IngestPipeline/prepare`` and, when it is
/// accepted, the group-commit writer into a fresh database, then reports CPU time and the peak
/// minus the resident size before the run.
struct BenchHostileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Measure CPU time and peak memory of adversarial bodies (one child process per shape and size).",
        discussion: """
            Bodies are posted as identity (not gzip) with the body limit raised to the size, so the \
            decode path sees exactly SIZE bytes whatever the gzip ratio limit would have said. \
            Budget (DESIGN.md): peak extra memory ≤ 16 × the body, ≤ 100 ms of one core per MB. \
            Shapes: \(HostileShape.allCases.map(\.rawValue).joined(separator: ", ")).
            """
    )

    @Option(help: "Shapes to run, comma-separated, or all.")
    var shapes = "all"

    @Option(help: "Body sizes in bytes, comma-separated (K and M suffixes allowed).")
    var sizes = "64K,256K,1M,4M,16M,32M"

    @Flag(help: "Decode only: skip writing accepted bodies to a fresh database.")
    var noStore = false

    @Option(
        name: .customLong("write-body"),
        help: "Write the body of --one SHAPE --size BYTES to this file instead of measuring (for HTTP load).")
    var writeBody: String?

    @Option(
        name: .customLong("body-files"), parsing: .upToNextOption,
        help:
            "Measure these body files instead of shapes (a leading selector byte below 4, as in the fuzz corpus, is skipped; gzip is inflated)."
    )
    var bodyFiles: [String] = []

    @Option(help: "Measure (or write) one shape only, in this process.")
    var one: String?

    @Option(help: "With --one: the body size in bytes.")
    var size: Int?

    func run() async throws {
        if !bodyFiles.isEmpty {
            print(
                "file                                       size_MB  outcome                   cpu_s  ms_per_MB  peak_extra_MB  x_body"
            )
            for path in bodyFiles {
                var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                if let first = bytes.first, first < 4 { bytes.removeFirst() }
                var encoding = BodyEncoding.identity
                if bytes.starts(with: [0x1f, 0x8b]) { encoding = .gzip }
                let name = (path as NSString).lastPathComponent
                print(
                    try await Self.measure(
                        name: String(name.prefix(42)), body: bytes, encoding: encoding, store: !noStore))
            }
            return
        }
        if let one, let size {
            guard let shape = HostileShape(rawValue: one) else { throw CommandError("unknown shape \(one)") }
            if let writeBody {
                try Data(shape.body(size: size)).write(to: URL(fileURLWithPath: writeBody))
                return
            }
            print(try await Self.measure(shape, size: size, store: !noStore))
            return
        }
        let chosen =
            shapes == "all"
            ? HostileShape.allCases
            : try shapes.split(separator: ",").map { name in
                guard let shape = HostileShape(rawValue: String(name)) else {
                    throw ValidationError("unknown shape \(name); known: \(HostileShape.allCases.map(\.rawValue))")
                }
                return shape
            }
        let byteSizes = try sizes.split(separator: ",").map { text -> Int in
            guard let value = Self.bytes(String(text)) else { throw ValidationError("bad size \(text)") }
            return value
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        print("shape                size_MB  outcome                   cpu_s  ms_per_MB  peak_extra_MB  x_body")
        for shape in chosen {
            for size in byteSizes {
                let process = Process()
                process.executableURL = executable
                process.arguments =
                    ["bench", "hostile", "--one", shape.rawValue, "--size", String(size)]
                    + (noStore ? ["--no-store"] : [])
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                let line = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                print(line.isEmpty ? "\(shape.rawValue) \(size): child exited \(process.terminationStatus)" : line)
            }
        }
    }

    /// One measurement, in this process.
    static func measure(_ shape: HostileShape, size: Int, store: Bool) async throws -> String {
        let family: DocumentFamily? = [.deepFlame, .emptyFrames].contains(shape) ? .diagnostic : .metric
        return try await measure(
            name: shape.rawValue, body: shape.body(size: size), encoding: .identity, family: family, store: store)
    }

    /// One measurement of `body`, in this process; `family` nil detects it per document.
    static func measure(
        name: String, body: [UInt8], encoding: BodyEncoding, family: DocumentFamily? = nil, store: Bool
    ) async throws -> String {
        var megabytes = Double(body.count) / 1_048_576
        var limits = IngestLimits()
        limits.maxBodyBytes = max(limits.maxBodyBytes, body.count)
        let pipeline = IngestPipeline(limits: limits)
        let buffer = ByteBuffer(bytes: body)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try Database(path: directory.appendingPathComponent("bench.sqlite").path)
        defer { database.checkpointForExit() }
        try database.migrate()
        let writer = try IngestWriter(database: database)

        if encoding == .gzip, let inflated = try? pipeline.inflate(buffer) {
            megabytes = Double(inflated.readableBytes) / 1_048_576  // per decompressed MB
        }
        resetPeak()
        let baseline = residentKilobytes("VmRSS:")
        let cpuBefore = cpuSeconds()
        var outcome: String
        do {
            let items = try pipeline.prepare(
                body: buffer, encoding: encoding, family: family, app: "com.example.hostile", receivedAt: 0)
            let dropped = items.reduce(0) { $0 + $1.document.droppedValues }
            if store {
                _ = try await writer.submit(IngestRequest(app: "com.example.hostile", items: items))
                outcome = "stored, \(dropped) dropped"
            } else {
                outcome = "decoded, \(dropped) dropped"
            }
        } catch let error as APIError {
            outcome = "\(error.status.code) \(error.code)"
        }
        let cpu = cpuSeconds() - cpuBefore
        let peak = residentKilobytes("VmHWM:")
        await writer.shutdown()
        let extraMB = Double(max(0, peak - baseline)) / 1_024
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        return pad(name, name.count > 21 ? 43 : 21) + pad(String(format: "%.2f", megabytes), 9) + pad(outcome, 26)
            + pad(String(format: "%.3f", cpu), 7) + pad(String(format: "%.1f", cpu * 1_000 / megabytes), 11)
            + pad(String(format: "%.1f", extraMB), 15) + String(format: "%.1f", extraMB / megabytes)
    }

    /// `64K`, `1M` or a plain number of bytes.
    static func bytes(_ text: String) -> Int? {
        let upper = text.uppercased()
        if upper.hasSuffix("K") { return Int(upper.dropLast()).map { $0 * 1_024 } }
        if upper.hasSuffix("M") { return Int(upper.dropLast()).map { $0 * 1_048_576 } }
        return Int(upper)
    }

    /// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS.
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// A `kB` field of /proc/self/status.
    static func residentKilobytes(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// User + system CPU seconds of this process.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
