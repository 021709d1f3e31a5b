import Foundation
import Testing

@testable import LifelineKit

/// `lifeline simulate` as a child process, its output in files (never a full pipe).
final class Child: @unchecked Sendable {
    let process = Process()
    private let out: URL
    private let err: URL

    init(_ arguments: [String], in directory: TemporaryDirectory) throws {
        let name = UUID().uuidString
        out = URL(fileURLWithPath: directory.path("\(name).out"))
        err = URL(fileURLWithPath: directory.path("\(name).err"))
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.executableURL = try LifelineBinary.url
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
    }

    /// Waits for the exit (polling, so the test's threads stay free) and returns the status.
    func wait(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("lifeline \(process.arguments ?? []) did not exit in time")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    var stdout: String { (try? String(contentsOf: out, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }
}

/// What a simulate run printed: payloads sent and the generated truth per version.
struct SimulateReport {
    var metric = 0
    var diagnostic = 0
    var retries = 0
    /// version → (device-days, diagnostics, entered, exited).
    var truth: [String: (deviceDays: Int, diagnostics: Int, entered: Int, exited: Int)] = [:]

    init(_ text: String) {
        var inTable = false
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "," })
            if line.hasPrefix("sent: "), words.count >= 6 {
                metric = Int(words[3]) ?? 0
                diagnostic = Int(words[5]) ?? 0
            } else if line.hasPrefix("accepted: "), let index = words.firstIndex(of: "retries:"),
                index + 1 < words.count
            {
                retries = Int(words[index + 1]) ?? 0
            } else if line.hasPrefix("generated, by version") {
                inTable = true
            } else if inTable, words.count >= 9, words[0] != "version", let days = Int(words[1]) {
                truth[String(words[0])] = (days, Int(words[2]) ?? 0, Int(words[6]) ?? 0, Int(words[7]) ?? 0)
            } else if inTable, !line.hasPrefix(" ") {
                inTable = false
            }
        }
    }
}

@Suite("lifeline simulate uploads through LifelineKit's spool", .serialized)
struct SimulateThroughSpoolTests {
    static func simulateArguments(
        _ server: LiveServer, spool: URL, devices: Int, days: Int, seed: Int, extra: [String] = []
    ) -> [String] {
        [
            "simulate", "--app", LiveServer.app, "--url", server.url.absoluteString, "--key", server.ingestKey,
            "--devices", "\(devices)", "--days", "\(days)", "--start", "2026-10-01", "--seed", "\(seed)",
            "--scenario", "expiration-hang", "--concurrency", "4", "--spool", spool.path, "--log-level", "error",
        ] + extra
    }

    /// The server's figures match the truth table of the run: payloads, device-days, diagnostics and the
    /// expiration handlers' entered/exited counts per version.
    static func expectServerMatches(_ report: SimulateReport, _ server: LiveServer) async throws {
        let stored = try await server.stored()
        #expect(stored.metrics == report.metric)
        #expect(stored.diagnostics == report.diagnostic)
        #expect(report.truth.values.reduce(0) { $0 + $1.deviceDays } == report.metric)
        #expect(report.truth.values.reduce(0) { $0 + $1.diagnostics } == report.diagnostic)
        let (status, body) = try await server.get(
            "/v1/apps/\(LiveServer.app)/expiration-handlers?from=2026-09-01&to=2026-12-31&group_by=version")
        #expect(status == 200)
        let rows = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["rows"] as? [[String: Any]] ?? []
        for (version, truth) in report.truth {
            let mine = rows.filter { $0["version"] as? String == version }
            #expect(mine.reduce(0) { $0 + (($1["entered"] as? Int) ?? 0) } == truth.entered, "entered of \(version)")
            #expect(mine.reduce(0) { $0 + (($1["exited"] as? Int) ?? 0) } == truth.exited, "exited of \(version)")
        }
    }

    static func count(_ directory: URL) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).count
    }

    @Test("a simulation through the spool survives a server SIGKILL and restart: each payload stored once")
    func serverRestartMidRun() async throws {
        let server = try LiveServer()
        try await server.start(config: unlimited)
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let spool = work.url.appendingPathComponent("spool")
        let simulate = try Child(
            Self.simulateArguments(
                // Paced (about five seconds in all), so the kill lands mid-run even on a loaded machine.
                server, spool: spool, devices: 60, days: 5, seed: 3, extra: ["--give-up-after", "90", "--rate", "60"]),
            in: work)
        let delivered = spool.appendingPathComponent("delivered")
        // Killed and relaunched from a thread of its own: a task could wait on a cooperative pool held by other
        // suites' long synchronous work until the whole run had been delivered.
        let deliveredBeforeKill = try await onOwnThread {
            let deadline = ContinuousClock.now + .seconds(60)
            while Self.count(delivered) < 30 && ContinuousClock.now < deadline { usleep(2_000) }
            let count = Self.count(delivered)
            server.stop(SIGKILL)
            usleep(300_000)
            try server.launch(config: unlimited)
            return count
        }
        try await server.waitUntilReady()

        let status = try await simulate.wait()
        #expect(status == 0, "\(simulate.stdout)\n\(simulate.stderr)")
        let report = SimulateReport(simulate.stdout)
        #expect(report.metric == 300)
        #expect(deliveredBeforeKill < report.metric + report.diagnostic, "the kill came after the last upload")
        #expect(simulate.stdout.contains("errors: 0"))
        try await Self.expectServerMatches(report, server)
        #expect(spooledFiles(spool).isEmpty)
        server.stop()
    }

    @Test("a run that cannot deliver before --give-up-after exits 1 saying how many are left; --drain delivers them")
    func giveUpThenDrain() async throws {
        let server = try LiveServer()  // not started yet: nothing listens on its port
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let spool = work.url.appendingPathComponent("spool")
        let simulate = try Child(
            Self.simulateArguments(
                server, spool: spool, devices: 20, days: 3, seed: 4, extra: ["--give-up-after", "0.5"]), in: work)
        #expect(try await simulate.wait() == 1)
        let report = SimulateReport(simulate.stdout)
        let total = report.metric + report.diagnostic
        #expect(report.metric == 60)
        #expect(spooledFiles(spool).count == total)
        #expect(simulate.stderr.contains("\(total) payloads left in the spool \(spool.path)"), "\(simulate.stderr)")

        try await server.start(config: unlimited)
        let drain = try Child(
            [
                "simulate", "--drain", "--spool", spool.path, "--app", LiveServer.app, "--url",
                server.url.absoluteString, "--key", server.ingestKey,
            ], in: work)
        #expect(try await drain.wait() == 0, "\(drain.stdout)\n\(drain.stderr)")
        #expect(drain.stdout.contains("\(total) payloads found, \(total) delivered"), "\(drain.stdout)")
        #expect(drain.stdout.contains("left: 0"))
        try await Self.expectServerMatches(report, server)
        #expect(spooledFiles(spool).isEmpty)
        server.stop()
    }

    @Test("a client SIGKILLed between write and rename leaves only whole reports, each delivered once")
    func clientKilledMidWrite() async throws {
        let server = try LiveServer()  // started only for the drain
        let work = try TemporaryDirectory()
        defer { work.remove() }
        let spool = work.url.appendingPathComponent("spool")
        let temporary = spool.appendingPathComponent("tmp")
        var sawPartial = false
        var rounds = 0
        // Each round kills a spooling `simulate` the moment a partial write shows in tmp/; the kill may
        // still land after that file's rename, so rounds go on until one leaves a partial file behind.
        while rounds < 30 && !sawPartial {
            rounds += 1
            let before = spooledFiles(spool).count
            let simulate = try Child(
                Self.simulateArguments(
                    server, spool: spool, devices: 2_000, days: 7, seed: 100 + rounds,
                    extra: ["--give-up-after", "60"]), in: work)
            // A busy watch, on a thread of its own so that it holds no thread of the cooperative pool.
            try await onOwnThread {
                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline && simulate.process.isRunning {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
                    if names.contains(where: { $0.hasSuffix(".partial") }) && spooledFiles(spool).count >= before + 3 {
                        break
                    }
                }
                kill(simulate.process.processIdentifier, SIGKILL)
            }
            #expect(try await simulate.wait() == SIGKILL)
            let partials = ((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [])
                .filter { $0.hasSuffix(".partial") }
            if !partials.isEmpty { sawPartial = true }
        }
        #expect(sawPartial, "no kill landed between a write and its rename in \(rounds) rounds")

        // Every whole report hashes to its name: no kill left a half-written file in place.
        let whole = spooledFiles(spool)
        #expect(!whole.isEmpty)
        for file in whole {
            let data = try Data(contentsOf: spool.appendingPathComponent(file))
            #expect(file.hasSuffix("/\(ContentHash.hex(data)).json"), "\(file) is not whole")
        }
        let metrics = whole.filter { $0.hasPrefix("metric/") }.count

        try await server.start(config: unlimited)
        let drain = try Child(
            [
                "simulate", "--drain", "--spool", spool.path, "--app", LiveServer.app, "--url",
                server.url.absoluteString, "--key", server.ingestKey,
            ], in: work)
        #expect(try await drain.wait() == 0, "\(drain.stdout)\n\(drain.stderr)")
        let stored = try await server.stored()
        #expect(stored.metrics == metrics)
        #expect(stored.metrics + stored.diagnostics == whole.count)
        server.stop()
    }
}
