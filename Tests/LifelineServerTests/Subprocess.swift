import Foundation
import HummingbirdTesting
import LifelineTestFixtures
import LifelineTestSupport
import NIOCore
import Testing

/// Runs the real `lifeline` binary: short commands to completion, or a server in the background.
enum Lifeline {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `lifeline ARGS…` to completion, waiting on a thread of its own: a test blocking Swift's
    /// cooperative pool (two threads here) for a subprocess stalls every other test's servers and
    /// clients (a fresh-clone run saw two servers not answer /healthz for 60 s).
    static func run(_ arguments: [String]) async throws -> Output {
        try await offPool { try runBlocking(arguments) }
    }

    /// `lifeline simulate` writes a fleet of `app` under `env`, `lifeline ingest` imports it into
    /// `env`'s database, and `lifeline compact --json` compacts its raw copies: the compaction's
    /// report (its `total_compacted` counts the copies the ingest's own writer compacted too).
    static func simulatedAndCompacted(
        _ env: TemporaryDatabase, app: String, devices: Int, days: Int
    ) async throws -> [String: Any] {
        let out = env.directory.url.appendingPathComponent("payloads").path
        let simulated = try await run([
            "simulate", "--out", out, "--app", app, "--devices", "\(devices)", "--days", "\(days)", "--start",
            "2026-10-01",
        ])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let ingested = try await run(["ingest", "--db", env.path, "--app", app, out])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let compacted = try await run(["compact", "--db", env.path, "--json"])
        #expect(compacted.status == 0, "\(compacted.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(compacted.stdout.utf8)) as? [String: Any]
        return try #require(report, "\(compacted.stdout)")
    }

    /// Runs a tool found on `PATH` (`/usr/bin/env arguments…`) in `directory` and waits for it, on
    /// the calling thread (wrap it in ``offPool(_:)`` from async code); its exit status.
    static func tool(_ arguments: [String], in directory: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    private static func runBlocking(_ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = try Paths.executable
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

    /// A `lifeline serve` process on 127.0.0.1 and a free port.
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int

        init(database: String, extra: [String] = []) throws {
            port = try Self.freePort()
            process.executableURL = try Paths.executable
            process.arguments =
                ["serve", "--db", database, "--host", "127.0.0.1", "--port", "\(port)", "--log-level", "warning"]
                + extra
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Waits until `/healthz` answers (or fails after 60 s: a loaded CI machine starts slowly).
        func waitUntilReady() async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            var attempts = 0
            var last = ""
            while ContinuousClock.now < deadline {
                guard process.isRunning else { throw TestFailure("server exited early: \(process.terminationStatus)") }
                attempts += 1
                do {
                    let status = try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                        try await client.get("/healthz").status
                    }
                    if status == .ok { return }
                    last = "\(status)"
                } catch {
                    last = "\(error)"
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw TestFailure("server on port \(port) did not become ready: \(attempts) probes, the last: \(last)")
        }

        func kill(_ signal: Int32) {
            Foundation.kill(process.processIdentifier, signal)
        }

        /// Waits (on a thread of its own) for the process to end and returns its exit status.
        func wait() async -> Int32 {
            let process = self.process
            return await offPool {
                process.waitUntilExit()
                return process.terminationStatus
            }
        }

        deinit {
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }

        /// A TCP port nobody listens on right now.
        static func freePort() throws -> Int {
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
    }
}
