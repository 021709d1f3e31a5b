import Foundation
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSimulator
import LifelineSQLite
import LifelineTestFixtures
import LifelineTestSupport
import NIOCore
import Testing

/// Each scenario's promise (README "Simulate a fleet", `Scenario.explanation`): which alerts of
/// `config/rules.example.yaml` fire on the scenario's version. The simulated payloads go through
/// the ingest pipeline and writer into a real SQLite database (the path `lifeline rules test` takes),
/// then the example rules are evaluated on the last simulated day.
@Suite("Scenario alerts")
struct ScenarioAlertTests {
    /// The example rules each scenario must fire for its version.
    static let expectedFiring: [Scenario: Set<String>] = [
        .baseline: [],
        .expirationHang: ["expiration_handler_imbalance", "background_task_assertion_timeouts"],
        .restorationRegression: ["restoration_error_rate"],
        .watchdogSpike: ["watchdog_terminations"],
        .crashSpike: ["new_crash_group"],
        .perfRegression: ["time_to_first_draw_p95", "launch_p90_regression"],
    ]

    /// Every alert some scenario promises; the baseline must fire none of them.
    static let scenarioAlerts = expectedFiring.values.reduce(into: Set<String>()) { $0.formUnion($1) }

    @Test("the example rule file names every alert the scenarios promise")
    func rulesExist() throws {
        let rules = try RuleFileLoader.load(path: Self.exampleRulesPath)
        #expect(Self.scenarioAlerts.isSubset(of: Set(rules.rules.map(\.name))))
    }

    @Test("each scenario fires its example alerts on its version", arguments: Scenario.allCases)
    func scenarioFiresItsAlerts(scenario: Scenario) async throws {
        // Two days: the first gives every baseline crash group its first sighting, the second is the
        // evaluation day (the rules' 1d window), where ~1,050 of the 2,000 devices run 4.2.0 — over
        // the largest guard, `watchdog_terminations`' 1,000 device-days.
        let config = testConfig(devices: 2_000, days: 2, scenario: scenario)
        let simulation = try Simulation(config)
        let lastDay = config.startDay + config.days - 1
        let evaluationTime = Int64(lastDay) * 86_400 + 23 * 3600

        let database = try TemporaryDatabase()
        defer { database.remove() }
        try await Self.ingest(simulation, into: database.database, receivedAt: evaluationTime)

        let firing = try await Self.firingAlerts(database: database.database, at: evaluationTime)
        let onVersion = Set(firing.filter { $0.version == config.affectedVersion }.map(\.rule))
        let expected = try #require(Self.expectedFiring[scenario])
        #expect(
            expected.isSubset(of: onVersion),
            "\(scenario.rawValue): missing \(expected.subtracting(onVersion).sorted()); firing \(firing)")
        if scenario == .baseline {
            // A healthy fleet fires nothing at all, latency rules included.
            #expect(firing.isEmpty, "baseline fires \(firing)")
        }
    }

    // MARK: Glue (as `lifeline rules test`)

    /// `config/rules.example.yaml` of this repository.
    static let exampleRulesPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/rules.example.yaml").path

    /// Runs every payload of `simulation` through `IngestPipeline.prepare` and `IngestWriter`.
    static func ingest(_ simulation: Simulation, into database: Database, receivedAt: Int64) async throws {
        let pipeline = IngestPipeline()
        let app = simulation.config.bundleIdentifier
        try await IngestWriter.withWriter(database: database) { writer in
            var items: [IngestItem] = []
            func flush() async throws {
                guard !items.isEmpty else { return }
                let outcome = try await writer.submit(IngestRequest(app: app, items: items))
                #expect(outcome.accepted == items.count)
                items.removeAll(keepingCapacity: true)
            }
            // Generating and decoding take seconds of CPU: on a thread of its own, a chunk at a time,
            // not on Swift's cooperative pool (two threads here), which every test's servers share.
            for start in stride(from: 0, to: simulation.deviceDayCount, by: 100) {
                let end = min(simulation.deviceDayCount, start + 100)
                let prepared = await offPool {
                    Result { () throws(IngestError) -> [IngestItem] in
                        var chunk: [IngestItem] = []
                        for n in start..<end {
                            for payload in simulation.deviceDay(at: n).payloads {
                                chunk += try pipeline.prepare(
                                    body: ByteBuffer(bytes: payload.json), encoding: .identity,
                                    family: payload.kind == .metric ? .metric : .diagnostic, app: app,
                                    receivedAt: receivedAt * 1000)
                            }
                        }
                        return chunk
                    }
                }
                items += try prepared.get()
                if items.count >= 1_000 { try await flush() }
            }
            try await flush()
        }
    }

    /// The firing alerts after evaluating the example rules at `time − for` of every rule and at
    /// `time`, so a rule whose condition holds on the evaluation day has held for its `for`.
    static func firingAlerts(database: Database, at time: Int64) async throws -> [(rule: String, version: String?)] {
        let rules = try RuleFileLoader.load(path: exampleRulesPath)
        let trial = await RuleTrial.run(
            rules, analysis: AnalysisRunner(source: database), store: database.alertState, at: time)
        for record in trial.records.values {
            #expect(record.error == nil, "\(record.rule): \(record.error ?? "")")
        }
        return trial.snapshot.alerts.filter { $0.status == .firing }
            .map { ($0.rule, $0.labels["version"]) }
            .sorted { ($0.rule, $0.version ?? "") < ($1.rule, $1.version ?? "") }
    }
}
