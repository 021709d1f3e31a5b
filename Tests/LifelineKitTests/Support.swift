import Foundation
import LifelineKit
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A test's own failure, with a message.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The `lifeline` executable: `$LIFELINE_BINARY`, else the one built beside the test bundle.
enum LifelineBinary {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var url: URL {
        get throws {
            if let path = ProcessInfo.processInfo.environment["LIFELINE_BINARY"], !path.isEmpty {
                return URL(fileURLWithPath: path)
            }
            let candidates = [
                URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                repository.appendingPathComponent(".build/debug"),
            ]
            for directory in candidates {
                let url = directory.appendingPathComponent("lifeline")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            throw TestFailure("lifeline executable not found near \(candidates.map(\.path)); set LIFELINE_BINARY")
        }
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `lifeline ARGS…` to completion.
    static func run(_ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = try url
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// A directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifelinekit-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A real `lifeline serve` on 127.0.0.1 over a SQLite file, with an ingest and a read key of the app.
final class LiveServer: @unchecked Sendable {
    static let app = "com.example.notes"

    let directory: TemporaryDirectory
    let port: Int
    let ingestKey: String
    let readKey: String
    private(set) var process: Process?

    var database: String { directory.path("lifeline.sqlite") }
    var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    /// Creates the database and its keys (the server is not started).
    init() throws {
        directory = try TemporaryDirectory()
        port = try freePort()
        ingestKey = try Self.createKey(
            ["--role", "ingest", "--app", Self.app], database: directory.path("lifeline.sqlite"))
        readKey = try Self.createKey(["--role", "read"], database: directory.path("lifeline.sqlite"))
    }

    private static func createKey(_ arguments: [String], database: String) throws -> String {
        let output = try LifelineBinary.run(["keys", "create"] + arguments + ["--db", database])
        guard output.status == 0, let key = output.stdout.split(separator: "\n").last else {
            throw TestFailure("keys create failed: \(output.stderr)")
        }
        return String(key)
    }

    /// Starts the server (`config`: YAML of a config file) and waits until `/healthz` answers.
    func start(config: String? = nil) async throws {
        try launch(config: config)
        try await waitUntilReady()
    }

    /// Starts the server process (`config`: YAML of a config file) without waiting for it.
    func launch(config: String? = nil) throws {
        var arguments = [
            "serve", "--db", database, "--host", "127.0.0.1", "--port", "\(port)", "--log-level", "error",
        ]
        if let config {
            let file = directory.path("config-\(UUID().uuidString).yaml")
            try Data(config.utf8).write(to: URL(fileURLWithPath: file))
            arguments += ["--config", file]
        }
        let process = Process()
        process.executableURL = try LifelineBinary.url
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    /// Waits until `/healthz` of the launched server answers. Bounded by attempts (a minute of them when each is
    /// prompt), not by the clock: on a busy cooperative pool one wait between two attempts can outlast the start.
    func waitUntilReady() async throws {
        guard let process else { throw TestFailure("the server was not launched") }
        for _ in 0..<1_200 {
            guard process.isRunning else { throw TestFailure("server exited early: \(process.terminationStatus)") }
            if (try? await get("/healthz").status) == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("server on port \(port) did not become ready")
    }

    /// Sends `signal` and waits for the process to end.
    func stop(_ signal: Int32 = SIGTERM) {
        guard let process else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        self.process = nil
    }

    /// A GET with the read key.
    func get(_ path: String) async throws -> (status: Int, body: Data) {
        guard let target = URL(string: url.absoluteString + path) else { throw TestFailure("bad path \(path)") }
        var request = URLRequest(url: target)
        request.setValue("Bearer \(readKey)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 5
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    /// Metric and diagnostic payloads stored for the app (`GET /v1/apps`).
    func stored() async throws -> (metrics: Int, diagnostics: Int) {
        let (status, body) = try await get("/v1/apps")
        guard status == 200, let object = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            let apps = object["apps"] as? [[String: Any]]
        else { throw TestFailure("GET /v1/apps answered \(status)") }
        guard let app = apps.first(where: { $0["bundle_id"] as? String == Self.app }) else { return (0, 0) }
        return ((app["metric_payloads"] as? Int) ?? 0, (app["diagnostic_payloads"] as? Int) ?? 0)
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        directory.remove()
    }
}

/// A TCP port nobody listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestFailure("bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A legacy `MXMetricPayload` document of the test app; `index` makes its bytes (and its day) distinct.
func metricReport(_ index: Int, padding: Int = 0) -> Data {
    let day = Date(timeIntervalSince1970: 1_790_000_000 + Double(index % 300) * 86_400)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd"
    let date = formatter.string(from: day)
    let note = padding > 0 ? ", \"note\": \"\(noise(padding, seed: index))\"" : ""
    return Data(
        """
        {"appVersion": "4.2.0", "timeStampBegin": "\(date) 00:00:00 +0000", "timeStampEnd": "\(date) 23:59:00 +0000",
         "metaData": {"appBuildVersion": "420", "osVersion": "iPhone OS 17.4 (21E219)", "regionFormat": "US",
          "deviceType": "iPhone15,2", "platformArchitecture": "arm64e", "bundleIdentifier": "\(LiveServer.app)"},
         "applicationExitMetrics": {"foregroundExitData": {"cumulativeNormalAppExitCount": \(index),
          "cumulativeMemoryResourceLimitExitCount": \(index % 7)}}\(note)}
        """.utf8)
}

/// `count` letters that gzip cannot shrink much.
func noise(_ count: Int, seed: Int) -> String {
    var state = UInt64(truncatingIfNeeded: seed) &+ 0x9E37_79B9_7F4A_7C15
    let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return String(
        (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return letters[Int((state >> 33) % UInt64(letters.count))]
        })
}

/// Collects a client's outcomes in the background.
final class OutcomeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(at: ContinuousClock.Instant, outcome: UploadOutcome)] = []

    func append(_ outcome: UploadOutcome) {
        lock.lock()
        items.append((ContinuousClock.now, outcome))
        lock.unlock()
    }

    var all: [(at: ContinuousClock.Instant, outcome: UploadOutcome)] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

/// Runs `body` on a thread of its own, not on the cooperative pool (which other suites' long synchronous work may
/// hold for tens of seconds), and returns its result.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
