import Foundation
import HTTPTypes
import HummingbirdTesting
import LifelineAnalysis
import LifelineServer
import LifelineSimulator
import LifelineTestFixtures
import LifelineTestSupport
import NIOCore
import Testing

/// The metrics explorer, Insights and Apple's `perfPowerMetrics` shape over a real server
/// (issue 26): the simulator's `perf-regression` scenario and its baseline are posted through
/// HTTP, and every figure read back is checked against the simulator's truth table.
@Suite("Metrics explorer and Insights over a real server")
struct ExplorerEndpointTests {
    static let app = "com.example.notes"
    static let versions = ["4.0.0", "4.1.0", "4.2.0", "4.3.0"]
    /// The simulator's metrics and the explorer's ids.
    static let metrics: [(PerfMetric, String)] = [
        (.launch, "launch.time_to_first_draw"), (.hang, "hang.hang_time"), (.peakMemory, "memory.peak"),
        (.diskWrites, "disk.logical_writes"), (.cpuTime, "battery.cpu_time"),
        (.hitchRatio, "animation.scroll_hitch_time_ratio"),
    ]

    static func config(_ scenario: Scenario) -> SimulationConfig {
        var config = SimulationConfig(
            bundleIdentifier: app, days: 8, startDay: SimulationConfig.day(from: "2026-10-01"))
        config.devices = 200
        config.versions = versions
        config.scenario = scenario
        config.seed = 11
        config.regressionMetrics = metrics.map(\.0)
        return config
    }

    /// The metric payloads of a simulation as JSON arrays of 50 documents (on a thread of its own,
    /// off Swift's pool and GCD's core-wide queues: the simulation blocks for seconds).
    static func bodies(_ config: SimulationConfig) async throws -> [[UInt8]] {
        try await offPool {
            let simulation = try Simulation(config)
            let documents = (0..<simulation.deviceDayCount).flatMap { simulation.deviceDay(at: $0).payloads }
                .filter { $0.kind == .metric }.map(\.json)
            return stride(from: 0, to: documents.count, by: 50).map { start in
                var body: [UInt8] = [UInt8(ascii: "[")]
                for (index, document) in documents[start..<min(start + 50, documents.count)].enumerated() {
                    if index > 0 { body.append(UInt8(ascii: ",")) }
                    body.append(contentsOf: document)
                }
                body.append(UInt8(ascii: "]"))
                return body
            }
        }
    }

    func get(_ client: any TestClientProtocol, _ uri: String, _ token: String) async throws -> (
        HTTPFields, [String: Any]
    ) {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
        return (response.headers, try json(response.body))
    }

    /// Posts `scenario`'s metric payloads and runs `body` with a read token.
    func withScenario(
        _ scenario: Scenario, _ body: @Sendable (any TestClientProtocol, String, Int) async throws -> Void
    ) async throws {
        let bodies = try await Self.bodies(Self.config(scenario))
        try await TestStore.with(.sqlite) { env in
            let ingest = try await env.token(.ingest, app: Self.app)
            let read = try await env.token(.read)
            try await env.withLiveServer { client in
                var accepted = 0
                for payload in bodies {
                    let response = try await client.execute(
                        uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest, gzip: true),
                        body: try gzip(Data(payload)))
                    #expect(response.status == .accepted, "\(String(buffer: response.body))")
                    accepted += (try json(response.body)["accepted"] as? Int) ?? 0
                }
                try await body(client, read, accepted)
            }
        }
    }

    static let window = "from=2026-09-30&to=2026-10-09"

    @Test(
        "perf-regression: percentiles within the truth table's error, every planted regression flagged, Apple's shape")
    func perfRegression() async throws {
        let truth = PerfTruth(config: Self.config(.perfRegression))
        try await withScenario(.perfRegression) { client, read, accepted in
            #expect(accepted > 1_000)
            // Answered right after the last acknowledgement: every device-day is in.
            let (_, usage) = try await get(
                client, "/v1/apps/\(Self.app)/metrics?\(Self.window)&category=launch&group_by=version&limit=10000", read
            )
            let rows = usage["rows"] as? [[String: Any]] ?? []
            let launchDays = rows.filter { $0["metric"] as? String == "launch.time_to_first_draw" }
                .compactMap { $0["device_days"] as? Int }.reduce(0, +)
            #expect(launchDays == accepted, "every device-day with a launch histogram is folded")

            var checked = 0
            for category in ["launch", "hang", "memory", "disk", "battery", "animation"] {
                let (_, body) = try await get(
                    client, "/v1/apps/\(Self.app)/metrics?\(Self.window)&category=\(category)", read)
                for row in body["rows"] as? [[String: Any]] ?? [] {
                    guard let id = row["metric"] as? String, let version = row["version"] as? String,
                        let metric = Self.metrics.first(where: { $0.1 == id })?.0,
                        let expected = truth[version, metric]
                    else { continue }
                    #expect(row["category"] as? String == category)
                    checked += 1
                    let days = row["device_days"] as? Int ?? 0
                    #expect(row["insufficient_data"] as? Bool == false, "\(id) \(version): \(days) device-days")
                    // Histogram metrics' tolerance is taken at one sample per device-day: looser
                    // than their sample count warrants, never tighter.
                    for (key, q) in [("p50", 0.5), ("p90", 0.9)] {
                        let value = row[key] as? Double ?? .nan
                        let tolerance = expected.tolerance(q, count: days)
                        #expect(
                            abs(value - expected.expected(q)) <= tolerance,
                            "\(id) \(version) \(key): \(value) vs truth \(expected.expected(q)) ± \(tolerance)")
                    }
                }
            }

            #expect(checked == Self.metrics.count * Self.versions.count, "every metric of every version checked")

            let (_, insights) = try await get(client, "/v1/apps/\(Self.app)/insights?\(Self.window)", read)
            #expect(insights["latest_version"] as? String == "4.3.0")
            #expect(insights["reference_versions"] as? [String] == ["4.0.0", "4.1.0", "4.2.0"])
            let regressions = insights["regressions"] as? [[String: Any]] ?? []
            for (_, id) in Self.metrics {
                let flagged = regressions.filter { $0["metric"] as? String == id }
                #expect(!flagged.isEmpty, "\(id) not flagged: \(regressions.compactMap { $0["metric"] })")
                for insight in flagged {
                    let delta = insight["delta_percentage"] as? Double ?? 0
                    let interval = insight["confidence_interval"] as? [Double] ?? []
                    #expect(delta > 10 && interval.count == 2 && interval[0] > 0, "\(insight)")
                    #expect(insight["latest_device_days"] as? Int ?? 0 >= 100)
                }
            }

            let (headers, apple) = try await get(client, "/v1/apps/\(Self.app)/perfPowerMetrics?\(Self.window)", read)
            #expect(headers[.contentType] == "application/vnd.apple.xcode-metrics+json")
            let product = (apple["productData"] as? [[String: Any]])?.first
            let categories = product?["metricCategories"] as? [[String: Any]] ?? []
            let launch = categories.first { $0["identifier"] as? String == "LAUNCH" }
            let launchTime = (launch?["metrics"] as? [[String: Any]])?.first {
                $0["identifier"] as? String == "launchTime"
            }
            let datasets = launchTime?["datasets"] as? [[String: Any]] ?? []
            let all = datasets.first {
                let criteria = $0["filterCriteria"] as? [String: Any]
                return criteria?["device"] as? String == "all"
                    && criteria?["percentile"] as? String == "percentile.fifty"
            }
            let points = all?["points"] as? [[String: Any]] ?? []
            #expect(points.compactMap { $0["version"] as? String } == Self.versions)
            #expect(points.allSatisfy { $0["value"] is Double && $0["errorMargin"] is Double })
            // The dashboard's metrics page: Insights and a chart per metric across versions.
            let page = try await client.execute(
                uri: "/?app=\(Self.app)&from=2026-09-30&to=2026-10-09&page=metrics", method: .get,
                headers: [.authorization: "Bearer \(read)"])
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("<h2>Insights</h2>") && html.contains("<h2>Memory</h2>"))
            #expect(html.components(separatedBy: "<svg class=\"chart\"").count - 1 >= 10)
            #expect(html.contains("Time to first draw") || html.contains("time to first draw"))
            if Chromium.isAvailableOrRequired {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID()).html")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(buffer: page.body).write(to: file)
                try await Chromium.expectRenders(file)
            }

            let appleRegressions = (apple["insights"] as? [String: Any])?["regressions"] as? [[String: Any]] ?? []
            #expect(
                appleRegressions.contains {
                    $0["metric"] as? String == "launchTime" && $0["latestVersion"] as? String == "4.3.0"
                })
            try await baselineIsQuiet(client, read)
        }
    }

    /// A version without a planted change is no regression; bad parameters are named.
    func baselineIsQuiet(_ client: any TestClientProtocol, _ read: String) async throws {
        // 4.2.0 against 4.0.0 and 4.1.0: the scenario changed none of them (the baseline's versions).
        let (_, insights) = try await get(
            client, "/v1/apps/\(Self.app)/insights?\(Self.window)&latest=4.2.0&reference=2", read)
        #expect(insights["latest_version"] as? String == "4.2.0")
        let regressions = (insights["regressions"] as? [[String: Any]] ?? []).compactMap { $0["metric"] as? String }
        for (_, id) in Self.metrics { #expect(!regressions.contains(id), "\(id) flagged without a change") }
        #expect((insights["unchanged"] as? [Any])?.isEmpty == false)

        for (query, parameter) in [
            ("metrics?category=speed", "category"), ("metrics?group_by=day", "group_by"),
            ("insights?reference=0", "reference"), ("insights?group_by=version", "group_by"),
        ] {
            let response = try await client.execute(
                uri: "/v1/apps/\(Self.app)/\(query)", method: .get, headers: [.authorization: "Bearer \(read)"])
            #expect(response.status == .badRequest)
            let message = (try json(response.body)["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(errorCode(response.body) == "invalid_parameter" && message.hasPrefix(parameter), "\(message)")
        }
        let unknown = try await client.execute(
            uri: "/v1/apps/com.example.none/metrics", method: .get, headers: [.authorization: "Bearer \(read)"])
        #expect(unknown.status == .notFound)
    }
}
