import ArgumentParser
import Foundation
import LifelineSimulator

/// `lifeline simulate`: a fleet of devices of one app posting MetricKit payloads to a server
/// (or writing them to a directory), with scenarios that should trigger the example alert rules.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Play a fleet of devices posting gzipped MetricKit payloads to a running server.",
        discussion: """
            Each device sends one metric payload per simulated day (a device-day) and a diagnostic \
            payload when its day had crashes, hangs, CPU or disk-write exceptions or slow launches. \
            Devices mix OS versions, models and locales (English "1,234 ms", Chinese "1,530毫秒", German \
            "1.234 ms", French "1 234 ms"); newer app versions of --versions are adopted progressively \
            (version k of n is released on day k×days/n). The same --seed and options give byte-identical \
            payloads.

            Scenarios (--scenario) act on --scenario-version (default: the newest version):
              baseline: \(Scenario.baseline.explanation)
              expiration-hang: \(Scenario.expirationHang.explanation)
              restoration-regression: \(Scenario.restorationRegression.explanation)
              watchdog-spike: \(Scenario.watchdogSpike.explanation)
              crash-spike: \(Scenario.crashSpike.explanation)
              perf-regression: \(Scenario.perfRegression.explanation)

            perf-regression takes --regression-factor (a multiplier, 1.3, or a percentage, +30%) and \
            --regression-metrics (all, or some of \(PerfMetric.allCases.map(\.rawValue).joined(separator: ", "))). \
            Insights compare the newest version with the mean of the versions before it: give several \
            (e.g. --versions 4.0.0,4.1.0,4.2.0,4.3.0 --days 8), each needs 100 device-days or more.

            At the end it prints what was sent (accepted, duplicates, errors by status, throughput, \
            latency percentiles) and the generated truth per version, to compare with Lifeline's figures: \
            the tallies, then per version and metric the law of the performance figures and the p50/p90 \
            Lifeline should find (--truth FILE also writes both as JSON). \
            Uploads go through LifelineKit, the client apps embed: every payload is written to a spool \
            first (--spool DIR, else a temporary directory), named by the SHA-256 of its bytes, which is also \
            its Idempotency-Key (the same --seed and options give the same bytes, so re-running a simulation \
            only produces duplicates). --give-up-after SECONDS stops uploading after that time and leaves \
            what is not delivered in the spool; `lifeline simulate --drain --spool DIR --url URL --key KEY` \
            delivers it later.

            Exit code 1 if any payload finally failed or is left in the spool.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Base URL of the Lifeline server.")
    var url = "http://127.0.0.1:8080"

    @Option(help: "Ingest key of the app (required unless --out).")
    var key: String?

    @Option(help: "Bundle identifier of the simulated app; its last component names the app binary in call stacks.")
    var app: String

    @Option(help: "Write the .json.gz payloads under this directory instead of posting them (no server needed).")
    var out: String?

    @Option(help: "Number of devices in the fleet.")
    var devices = 100

    @Option(help: "Number of simulated days (one metric payload per device and day).")
    var days = 7

    @Option(help: "First simulated day, YYYY-MM-DD (UTC); default: --days days before today.")
    var start: String?

    @Option(help: "App versions, oldest first, comma-separated; newer ones are adopted progressively.")
    var versions = "4.1.0,4.2.0"

    @Option(
        help:
            "What goes wrong: baseline, expiration-hang, restoration-regression, watchdog-spike, crash-spike, perf-regression."
    )
    var scenario = "baseline"

    @Option(help: "The version the scenario acts on (default: the newest of --versions).")
    var scenarioVersion: String?

    @Option(
        help: ArgumentHelp(
            "perf-regression: how much worse the regressed metrics get, a multiplier (1.3) or a percentage (+30%).",
            valueName: "factor"))
    var regressionFactor: String?

    @Option(
        help: ArgumentHelp(
            "perf-regression: the metrics made worse, comma-separated, or all (the default): "
                + PerfMetric.allCases.map(\.rawValue).joined(separator: ", ") + ".",
            valueName: "metrics"))
    var regressionMetrics: String?

    @Option(help: "Also write the generated truth (tallies and performance percentiles per version) to this JSON file.")
    var truth: String?

    @Option(help: "Seed of every random choice; the same seed gives byte-identical payloads.")
    var seed: UInt64 = 1

    @Option(
        help:
            "Metric payload format: v1 (jsonRepresentation), v2 (iOS 27 MetricReport, with app states) or mixed (every other device sends v2)."
    )
    var format: PayloadFormatChoice = .mixed

    @Option(help: "Device-days in flight at once (each posts its payloads in turn).")
    var concurrency = 8

    @Option(help: "Steady load in payloads per second (paced); default: as fast as the server takes them.")
    var rate: Double?

    @Option(
        help:
            "Attempts per payload without --give-up-after, the first included; connection errors, 408, 429 and 5xx are retried with backoff."
    )
    var attempts = 6

    @Option(help: "Seconds one request may take, connecting included, before it counts as a connection error.")
    var timeout = 10

    @Option(help: "Spool directory: every payload is written there before it is uploaded (default: a temporary one).")
    var spool: String?

    @Option(
        help:
            "Stop uploading after this many seconds: retry without an attempt limit until then, leave the rest in --spool and exit 1."
    )
    var giveUpAfter: Double?

    @Flag(help: "Generate nothing: deliver what --spool holds to --url with --key.")
    var drain = false

    func validate() throws {
        guard Scenario(rawValue: scenario) != nil else {
            throw ValidationError(
                "unknown --scenario \(scenario); use one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if Scenario(rawValue: scenario) != .perfRegression && (regressionFactor != nil || regressionMetrics != nil) {
            throw ValidationError(
                "--regression-factor and --regression-metrics apply to --scenario perf-regression only")
        }
        if let regressionFactor, Self.parseFactor(regressionFactor) == nil {
            throw ValidationError(
                "--regression-factor must be a multiplier (1.3) or a percentage (+30%), not \(regressionFactor)")
        }
        if let regressionMetrics, case .failure(let unknown) = PerfMetric.parseList(regressionMetrics) {
            let known = PerfMetric.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError(
                unknown.names.isEmpty
                    ? "--regression-metrics is empty; give all or some of \(known)"
                    : "unknown --regression-metrics \(unknown.names.joined(separator: ", ")); use all or some of \(known)"
            )
        }
        if drain && truth != nil { throw ValidationError("--drain generates nothing: it takes no --truth") }
        if out == nil && (key ?? "").isEmpty {
            throw ValidationError("give --key (an ingest key of --app) or --out DIR")
        }
        if out != nil && (spool != nil || giveUpAfter != nil || drain) {
            throw ValidationError("--out writes files: it takes no --spool, --give-up-after or --drain")
        }
        if drain && spool == nil { throw ValidationError("--drain needs --spool DIR") }
        if let giveUpAfter, !(giveUpAfter > 0 && giveUpAfter <= 86_400 * 30) {
            throw ValidationError("--give-up-after must be > 0 seconds")
        }
        if let start, SimulationConfig.day(from: start) == nil {
            throw ValidationError("--start must be a date YYYY-MM-DD, not \(start)")
        }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be 1…1024") }
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1…600 seconds") }
        guard (1...100).contains(attempts) else { throw ValidationError("--attempts must be 1…100") }
        if let rate, !(rate > 0 && rate <= 1_000_000) { throw ValidationError("--rate must be > 0") }
        if out == nil, URL(string: url)?.scheme?.hasPrefix("http") != true {
            throw ValidationError("--url must be an http(s) URL, not \(url)")
        }
        let problems = makeConfig().problems()
        if !problems.isEmpty { throw ValidationError(problems.joined(separator: "; ")) }
    }

    func makeConfig() -> SimulationConfig {
        var config = SimulationConfig(
            bundleIdentifier: app, days: days, startDay: start.flatMap { SimulationConfig.day(from: $0) })
        config.devices = devices
        config.versions = versions.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        config.scenario = Scenario(rawValue: scenario) ?? .baseline
        config.scenarioVersion = scenarioVersion
        config.seed = seed
        config.format = format
        if let factor = regressionFactor.flatMap(Self.parseFactor) { config.regressionFactor = factor }
        if let list = regressionMetrics, case .success(let metrics) = PerfMetric.parseList(list) {
            config.regressionMetrics = metrics
        }
        return config
    }

    /// `--regression-factor`: `1.3`, or a percentage `+30%` / `30%` / `-20%` (1 + p / 100); `nil`
    /// when it is neither (the range is checked with the rest of the configuration).
    static func parseFactor(_ text: String) -> Double? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        let percent = number.hasSuffix("%")
        if percent { number = number.dropLast().drop { $0 == " " } }
        if percent, let trimmed = Double(number.trimmingCharacters(in: .whitespaces)) {
            return trimmed.isFinite ? 1 + trimmed / 100 : nil
        }
        guard !percent, let value = Double(number), value.isFinite else { return nil }
        return value
    }

    func run() async throws {
        if drain {
            try await runDrain()
            return
        }
        let config = makeConfig()
        let simulation = try Simulation(config)
        let progress = Progress(total: simulation.deviceDayCount, label: "simulate")
        var failuresShown = 0
        let onDeviceDay: (DeviceDayReport) -> Void = { report in
            for (_, result) in report.deliveries {
                if let failure = result.failure, failuresShown < 5 {
                    failuresShown += 1
                    progress.interrupt("failed: \(failure)")
                }
            }
            progress.advance()
        }
        printError(
            "simulate: \(config.devices) devices × \(config.days) days from \(SimulationConfig.dateString(day: config.startDay)), "
                + "versions \(config.versions.joined(separator: ",")), scenario \(config.scenario.rawValue)"
                + (config.scenario == .baseline ? "" : " on \(config.affectedVersion)") + ", seed \(config.seed)"
                + ", format \(config.format.rawValue)")
        let summary: RunSummary
        var left = 0
        if let out {
            let sink = DirectorySink(directory: URL(fileURLWithPath: out))
            summary = await SimulationRunner.run(
                simulation, into: sink, concurrency: concurrency, rate: rate, onDeviceDay: onDeviceDay)
        } else {
            let server = try serverURL()
            do {
                try await SpoolSink.checkReachable(server)
            } catch {
                // With a spool the payloads wait there for the server; without one they would be lost.
                let message = "\(url) does not answer GET /healthz (\(error)); is `lifeline serve` running?"
                guard spool != nil else { throw CommandError(message) }
                printError("simulate: \(message) (payloads are kept in \(spool ?? ""))")
            }
            let directory = spoolDirectory()
            defer { if spool == nil { try? FileManager.default.removeItem(at: directory) } }
            let sink = try await openSink(server, directory)
            summary = await SimulationRunner.run(
                simulation, into: sink, concurrency: concurrency, rate: rate, onDeviceDay: onDeviceDay)
            left = await sink.left
        }
        progress.finish()
        print(Self.report(summary, config: config, wroteTo: out))
        if let truth {
            do {
                let json = try PerfTruth(config: config).json(config: config, fleet: summary.truth)
                try json.write(to: URL(fileURLWithPath: truth))
            } catch {
                throw CommandError("cannot write --truth \(truth): \(error)")
            }
        }
        if left > 0 {
            if let spool {
                printError(
                    "simulate: \(left) payloads left in the spool \(spool); deliver them with "
                        + "`lifeline simulate --drain --spool \(spool) --url \(url) --key KEY`")
            } else {
                printError("simulate: \(left) payloads not delivered (give --spool DIR to keep them for --drain)")
            }
            throw ExitCode(1)
        }
        if summary.totalErrors > 0 { throw ExitCode(1) }
    }

    /// `--drain`: delivers what the spool holds.
    private func runDrain() async throws {
        let directory = spoolDirectory()
        let sink = try await openSink(try serverURL(), directory)
        let report = await sink.drain()
        let dropped = report.dropped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        print(
            "drained \(directory.path): \(report.found) payloads found, \(report.delivered) delivered "
                + "(duplicates: \(report.duplicates)), retries: \(report.retries), dropped: "
                + "\(report.dropped.values.reduce(0, +))"
                + (dropped.isEmpty ? "" : " (\(dropped.joined(separator: ", ")))")
                + ", left: \(report.left)")
        if report.left > 0 {
            printError("simulate: \(report.left) payloads left in the spool \(directory.path)")
            throw ExitCode(1)
        }
        if !report.dropped.isEmpty { throw ExitCode(1) }
    }

    private func serverURL() throws -> URL {
        guard let server = URL(string: url) else { throw CommandError("--url must be an http(s) URL, not \(url)") }
        return server
    }

    /// `--spool`, else a fresh temporary directory.
    private func spoolDirectory() -> URL {
        if let spool { return URL(fileURLWithPath: spool, isDirectory: true) }
        return FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-simulate-\(UUID().uuidString)", isDirectory: true)
    }

    /// The LifelineKit client: without --give-up-after, --attempts per payload; with it, retries until then.
    private func openSink(_ server: URL, _ directory: URL) async throws -> SpoolSink {
        let sink = try await SpoolSink.open(
            url: server, key: key ?? "", spool: directory, concurrency: concurrency,
            attempts: giveUpAfter == nil ? attempts : nil, timeout: .seconds(timeout))
        if let giveUpAfter {
            await sink.giveUp(at: .now + .milliseconds(Int64(giveUpAfter * 1000)))
        }
        return sink
    }

    /// The end-of-run summary (standard output).
    static func report(_ s: RunSummary, config: SimulationConfig, wroteTo out: String?) -> String {
        func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }
        let metric = s.sent[.metric] ?? 0
        let diagnostic = s.sent[.diagnostic] ?? 0
        var lines: [String] = []
        if let out {
            lines.append("written: \(s.totalSent) payloads (\(metric) metric, \(diagnostic) diagnostic) under \(out)")
        } else {
            lines.append("sent: \(s.totalSent) payloads (\(metric) metric, \(diagnostic) diagnostic)")
            lines.append(
                "accepted: \(s.accepted), duplicates: \(s.duplicates) (idempotent replays: \(s.replayed)), retries: \(s.retries)"
            )
        }
        let errors = s.errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        lines.append("errors: \(s.totalErrors)" + (errors.isEmpty ? "" : " (\(errors))"))
        for failure in s.sampleFailures { lines.append("  e.g. \(failure)") }
        lines.append("throughput: \(f(s.throughput)) payloads/s over \(f(s.elapsed.milliseconds / 1000, 2)) s")
        lines.append(
            "latency ms: p50 \(f(s.latencyPercentile(50), 2)), p90 \(f(s.latencyPercentile(90), 2)), "
                + "p99 \(f(s.latencyPercentile(99), 2))")
        lines.append("generated, by version (what Lifeline should find):")
        lines.append(s.truth.table(order: config.versions))
        lines.append(PerfTruth(config: config).table())
        if config.scenario != .baseline {
            lines.append(
                "scenario \(config.scenario.rawValue) on \(config.affectedVersion): \(config.scenario.explanation)")
        }
        return lines.joined(separator: "\n")
    }
}

extension PayloadFormatChoice: ExpressibleByArgument {}
