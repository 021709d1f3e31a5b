import ArgumentParser
import Foundation
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineSQLite
import NIOCore

/// `lifeline rules test FILE --payloads DIR --at TIME`: which alerts would fire on these payloads
/// (like `promtool test rules`), through the real ingest pipeline and evaluator, on a temporary database.
struct RulesTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Ingest payload files into a temporary database, evaluate the rules at a time, print the alerts.",
        discussion: """
            The payload files (as for `lifeline ingest`) go through the same decoder and writer as \
            the HTTP API into a temporary database, removed afterwards. Rules are evaluated at TIME; \
            a rule with `for` is also evaluated at TIME − for, so it fires when its condition \
            holds at both (pick TIME late enough in the day). No notification is sent. \
            Exit code 0; with --expect-firing, 1 when the firing rules differ from the list.
            """
    )

    @Argument(help: "The rule file (YAML).")
    var file: String

    @Option(help: "Payload file or directory (*.json, *.json.gz); repeat for several.")
    var payloads: [String]

    @Option(help: "Evaluation time: 2026-11-01T12:00:00Z, 2026-11-01 (noon UTC) or epoch seconds.")
    var at: String

    @Option(
        help: "Bundle id to store the payloads under (default: the first bundleIdentifier found, else com.example.app)."
    )
    var app: String?

    @Option(
        name: .customLong("expect-firing"),
        help: "Comma-separated rule names expected to fire (and no other); exit 1 when different.")
    var expectFiring: String?

    func validate() throws {
        guard !payloads.isEmpty else { throw ValidationError("give --payloads DIR") }
        guard Self.parseTime(at) != nil else {
            throw ValidationError("--at must be like 2026-11-01T12:00:00Z, 2026-11-01 or epoch seconds")
        }
    }

    func run() async throws {
        let rules: RuleSet
        do {
            rules = try RuleFileLoader.load(path: file)
        } catch {
            for problem in error.problems { printError(problem.description) }
            throw ExitCode(1)
        }
        guard let now = Self.parseTime(at) else { throw ValidationError("--at must be a time YYYY-MM-DDTHH:MM:SSZ") }
        let paths = try IngestCommand.expand(payloads)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-rules-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try Database(
            path: directory.appendingPathComponent("test.sqlite").path, options: .init(synchronous: .normal))
        try database.migrate()

        let pipeline = IngestPipeline()
        let app = self.app ?? Self.detectApp(paths, pipeline: pipeline) ?? "com.example.app"
        var stored = 0
        var refused = 0
        try await IngestWriter.withWriter(database: database) { writer in
            let ingestor = Ingestor(pipeline: pipeline, writer: writer)
            for path in paths {
                do {
                    stored += try await ingestor.ingest(file: path, app: app, receivedAt: now * 1000).accepted
                } catch {
                    refused += 1
                    printError("refused \(path): \(error)")
                }
            }
        }

        let trial = await RuleTrial.run(
            rules, analysis: AnalysisRunner(source: database), store: database.alertState, at: now)
        let snapshot = trial.snapshot
        let records = trial.records

        print(
            "\(rules.rules.count) rules evaluated at \(UTCTimestamp.iso8601(now)) on \(stored) stored document(s) "
                + "of \(app) from \(paths.count) file(s)\(refused > 0 ? ", \(refused) refused" : "")")
        var firingRules: Set<String> = []
        for rule in rules.rules {
            let alerts = snapshot.alerts.filter { $0.rule == rule.name && $0.status != .resolved }
            let record = records[rule.name]
            if let error = record?.error {
                print("ERROR    \(rule.name): \(error)")
                continue
            }
            if alerts.isEmpty {
                print("ok       \(rule.name) (\(record?.valueSummary ?? "not evaluated"))")
                continue
            }
            for alert in alerts {
                if alert.status == .firing { firingRules.insert(rule.name) }
                let state = alert.status == .firing ? "FIRING  " : "pending "
                let labels = alert.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }
                let value = alert.lastValue.map { AnnotationTemplate.plainNumber($0) } ?? "n/a"
                print(
                    " \(state)\(rule.name){\(labels.joined(separator: ", "))} value \(value), samples \(alert.lastSamples)"
                )
                for (name, text) in alert.annotations.sorted(by: { $0.key < $1.key }) {
                    print("          \(name): \(text)")
                }
            }
        }
        guard let expectFiring else { return }
        let expected = Set(expectFiring.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            .subtracting([""])
        guard expected == firingRules else {
            let missing = expected.subtracting(firingRules).sorted()
            let unexpected = firingRules.subtracting(expected).sorted()
            printError(
                "expected firing: \(expected.sorted().joined(separator: ", ")); "
                    + "missing: \(missing.isEmpty ? "none" : missing.joined(separator: ", ")); "
                    + "unexpected: \(unexpected.isEmpty ? "none" : unexpected.joined(separator: ", "))")
            throw ExitCode(1)
        }
        print("expected firing rules match: \(expected.sorted().joined(separator: ", "))")
    }

    /// Epoch seconds of `2026-11-01T12:00:00Z`, `2026-11-01 12:00:00`, `2026-11-01` (noon) or an integer.
    static func parseTime(_ text: String) -> Int64? {
        if let seconds = Int64(text) { return seconds }
        var rest = Substring(text)
        if rest.hasSuffix("Z") { rest = rest.dropLast() }
        let day = String(rest.prefix(10))
        guard let ordinal = UTCDay(day)?.ordinal else { return nil }
        rest = rest.dropFirst(10)
        guard !rest.isEmpty else { return Int64(ordinal) * 86_400 + 43_200 }
        guard rest.first == "T" || rest.first == " " else { return nil }
        let parts = rest.dropFirst().split(separator: ":")
        guard (2...3).contains(parts.count), let h = Int64(parts[0]), let m = Int64(parts[1]),
            (0..<24).contains(h), (0..<60).contains(m)
        else { return nil }
        let s = parts.count == 3 ? Int64(parts[2]) : 0
        guard let s, (0..<60).contains(s) else { return nil }
        return Int64(ordinal) * 86_400 + h * 3600 + m * 60 + s
    }

    /// The first `bundleIdentifier` of the payload files, if any names one.
    static func detectApp(_ paths: [String], pipeline: IngestPipeline) -> String? {
        for path in paths {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { continue }
            var bytes = Array(data)
            if bytes.starts(with: [0x1F, 0x8B]) {
                guard let inflated = try? pipeline.inflate(ByteBuffer(bytes: bytes)) else { continue }
                bytes = Array(buffer: inflated)
            }
            if let documents = try? MetricKitDecoder.decode(bytes, family: nil),
                let app = documents.lazy.compactMap(\.bundleIdentifier).first
            {
                return app
            }
        }
        return nil
    }
}
