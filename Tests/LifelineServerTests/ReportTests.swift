import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineAlerts
import LifelineAnalysis
import LifelineModel
import LifelineReport
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// Reports made from a database filled through HTTP, checked against the query API's answers.
@Suite("Offline report")
struct ReportTests {
    static let notes = "com.example.notes"
    static let meter = "com.chimehq.Meter"
    static let window = "from=2026-10-01&to=2026-11-30"

    /// 4.1.0 with balanced expiration handlers, 4.2.0 entering 20 times and leaving 10 (flagged);
    /// the notes fixtures (restoration signposts) and a real crash report for a second app.
    static func fill(_ env: TemporaryDatabase, _ body: @Sendable (any TestClientProtocol, String) async throws -> Void)
        async throws
    {
        let keys = (try env.token(.ingest, app: notes), try env.token(.ingest, app: meter), try env.token(.read))
        try await env.withLiveServer { client in try await fill(client, keys: keys, body) }
    }

    /// ``fill(_:_:)`` on either backend.
    static func fill(_ env: TestStore, _ body: @Sendable (any TestClientProtocol, String) async throws -> Void)
        async throws
    {
        let keys = (
            try await env.token(.ingest, app: notes), try await env.token(.ingest, app: meter),
            try await env.token(.read)
        )
        try await env.withLiveServer { client in try await fill(client, keys: keys, body) }
    }

    /// Posts the report's documents through `client` with the keys (notes, meter, read), then runs `body`.
    private static func fill(
        _ client: any TestClientProtocol, keys: (String, String, String),
        _ body: @Sendable (any TestClientProtocol, String) async throws -> Void
    ) async throws {
        let (notesKey, meterKey, read) = keys
        var documents: [(path: String, key: String, body: Data)] = [
            ("/v1/metrics", notesKey, try Paths.fixture("metrics/lifeline-authored__ios17-full.json")),
            ("/v1/metrics", notesKey, try Paths.fixture("metrics/lifeline-authored__sparse-zoneless.json")),
            ("/v1/diagnostics", meterKey, try Paths.fixture("diagnostics/ChimeHQ_Meter__real_report.json")),
        ]
        for index in 0..<6 {
            documents.append(
                ("/v1/metrics", notesKey, metricPayload(index: index, bundle: notes, version: "4.1.0", day: 3 + index)))
            documents.append(
                (
                    "/v1/metrics", notesKey,
                    metricPayload(
                        index: 100 + index, bundle: notes, version: "4.2.0", day: 10 + index, entered: 20, exited: 10)
                ))
        }
        for document in documents {
            let response = try await client.execute(
                uri: document.path, method: .post, headers: ingestHeaders(document.key, gzip: true),
                body: try gzip(document.body))
            #expect(response.status == .accepted, "\(String(buffer: response.body))")
        }
        try await body(client, read)
    }

    static func rows(_ client: any TestClientProtocol, _ uri: String, _ token: String, key: String = "rows")
        async throws -> [[String: Any]]
    {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
        return try #require(try json(response.body)[key] as? [[String: Any]], "\(uri)")
    }

    /// A report builder over `env`'s database, as `lifeline report` makes one: what the live server
    /// acknowledged and has not folded yet is folded first (this reader is not the server's, so
    /// its read barrier does not apply).
    static func builder(_ env: TemporaryDatabase) throws -> ReportBuilder {
        try env.database.foldPending()
        return ReportBuilder(analysis: AnalysisRunner(source: env.database), alerts: env.database.alertState)
    }

    static func report(
        _ env: TemporaryDatabase, app: String, from: String = "2026-10-01", compare: Report.VersionPair? = nil
    ) async throws -> Report {
        let builder = try Self.builder(env)
        return try await builder.build(
            Report.Request(
                app: app, days: DayRange(from: try #require(UTCDay(from)), to: "2026-11-30"), compare: compare),
            now: 1_790_000_000)
    }

    @Test("exits, handlers, restoration and crashes in the report equal the query API's figures")
    func figuresMatchTheAPI() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await Self.fill(env) { client, read in
            let report = try await Self.report(env, app: Self.notes)
            #expect(report.versions.contains("4.1.0") && report.versions.contains("4.2.0"))

            let exits = try await Self.rows(
                client, "/v1/apps/\(Self.notes)/exits?\(Self.window)&group_by=version", read)
            #expect(!exits.isEmpty)
            #expect(exits.count == report.exits.count)
            for row in exits {
                let match = report.exits.first {
                    $0.key.version == row["version"] as? String && $0.state.rawValue == row["state"] as? String
                        && $0.reason == row["reason"] as? String
                }
                #expect(match?.count == (row["count"] as? NSNumber)?.int64Value, "\(row)")
                #expect(match?.perThousandDeviceDays == (row["per_1000_device_days"] as? NSNumber)?.doubleValue)
            }

            let handlers = try await Self.rows(
                client, "/v1/apps/\(Self.notes)/expiration-handlers?\(Self.window)&group_by=version", read)
            #expect(handlers.count == report.handlers.count)
            for row in handlers {
                let match = report.handlers.first {
                    $0.key.version == row["version"] as? String && $0.handler == row["handler"] as? String
                        && $0.category == row["category"] as? String
                }
                #expect(match?.flagged == row["flagged"] as? Bool, "\(row)")
                #expect(match?.imbalance == (row["imbalance"] as? NSNumber)?.int64Value)
            }
            let sync = report.handlers.filter { $0.handler == "SyncExpirationHandler" }
            #expect(sync.first { $0.key.version == "4.2.0" }?.flagged == true)
            #expect(sync.first { $0.key.version == "4.1.0" }?.flagged == false)

            let restoration = try await Self.rows(
                client, "/v1/apps/\(Self.notes)/restoration?\(Self.window)&group_by=version", read)
            #expect(!restoration.isEmpty)
            for row in restoration {
                let match = report.restorationByVersion.first { $0.key.version == row["version"] as? String }
                let rate = try #require((row["error_rate"] as? NSNumber)?.doubleValue, "\(row)")
                #expect(abs((match?.errorRate ?? -1) - rate) < 1e-12, "\(row)")
                #expect(match?.attempts == (row["attempts"] as? NSNumber)?.int64Value)
            }

            // The crash report is from October 2020.
            let crashes = try await Self.rows(
                client, "/v1/apps/\(Self.meter)/crashes?from=2020-01-01&to=2026-11-30", read, key: "groups")
            let meter = try await Self.report(env, app: Self.meter, from: "2020-01-01")
            #expect(!crashes.isEmpty)
            #expect(meter.crashes.map(\.group.id) == crashes.compactMap { ($0["id"] as? NSNumber)?.int64Value })
            #expect(meter.crashes.map(\.count) == crashes.compactMap { ($0["count"] as? NSNumber)?.int64Value })

            // The HTML carries the flagged row, escapes data and loads nothing from the network.
            let html = ReportHTML.document(report)
            #expect(html.contains("<tr class=\"flagged\"><td>4.2.0</td>"))
            #expect(!html.contains("src=") && !html.contains("<link") && !html.contains("url("))
            #expect(!html.contains("<script"))
            let markdown = ReportMarkdown.render(report)
            #expect(markdown.contains("| 4.2.0 | ExpirationHandlers/SyncExpirationHandler | 120 | 60 | 60 | 50.00 % |"))
        }
    }

    @Test("the report's JSON rows are the API's rows: same names, same values, same nulls")
    func reportJSONEqualsTheAPI() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await Self.fill(env) { client, read in
            func object(_ text: String) throws -> [String: Any] {
                try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            }
            func same(_ reportRows: Any?, _ apiRows: [[String: Any]], _ what: String) {
                let reportRows = reportRows as? [[String: Any]] ?? []
                #expect(!apiRows.isEmpty, "\(what): the API gave no rows")
                #expect(
                    NSArray(array: reportRows).isEqual(to: apiRows),
                    "\(what):\nreport \(reportRows)\napi    \(apiRows)")
            }
            let notes = try object(try ReportJSON.render(try await Self.report(env, app: Self.notes)))
            let base = "/v1/apps/\(Self.notes)"
            same(
                notes["exits"], try await Self.rows(client, "\(base)/exits?\(Self.window)&group_by=version", read),
                "exits")
            same(
                notes["expiration_handlers"],
                try await Self.rows(client, "\(base)/expiration-handlers?\(Self.window)&group_by=version", read),
                "expiration handlers")
            same(
                notes["restoration_by_version"],
                try await Self.rows(client, "\(base)/restoration?\(Self.window)&group_by=version", read),
                "restoration by version")
            same(
                notes["restoration_by_day"],
                try await Self.rows(client, "\(base)/restoration?\(Self.window)&group_by=day", read),
                "restoration by day")
            let launch = try await Self.rows(client, "\(base)/launch?\(Self.window)&group_by=version", read)
            let hangs = try await Self.rows(client, "\(base)/hangs?\(Self.window)&group_by=version", read)
            same(notes["percentiles"], launch + hangs, "launch and hang percentiles")
            let window = try #require(notes["window"] as? [String: Any])
            let apiWindow = try #require(
                try json(
                    try await client.execute(
                        uri: "\(base)/summary?\(Self.window)", method: .get, headers: [.authorization: "Bearer \(read)"]
                    ).body)["window"] as? [String: Any])
            #expect(NSDictionary(dictionary: window).isEqual(to: apiWindow))

            // Crash groups: the report lists each with its whole sample stack, as `GET …/crashes/{id}`.
            let meter = try object(
                try ReportJSON.render(try await Self.report(env, app: Self.meter, from: "2020-01-01")))
            let groups = try #require(meter["top_crashes"] as? [[String: Any]])
            #expect(!groups.isEmpty)
            var detail: [[String: Any]] = []
            for group in groups {
                let id = try #require((group["id"] as? NSNumber)?.int64Value)
                let response = try await client.execute(
                    uri: "/v1/apps/\(Self.meter)/crashes/\(id)?from=2020-01-01&to=2026-11-30", method: .get,
                    headers: [.authorization: "Bearer \(read)"])
                detail.append(try json(response.body))
            }
            same(groups, detail, "crash groups")
        }
    }

    @Test("alerts that fired in the window are listed with when they resolved; those outside it are not")
    func alertsInWindow() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await Self.fill(env) { _, _ in }
        let rules = try RuleFileLoader.parse(
            """
            groups:
              - name: handlers
                rules:
                  - name: handler_hangs
                    query: handler_imbalance_ratio
                    op: ">"
                    threshold: 0.1
                    window: 1d
                    group_by: [version]
            """, file: "rules.yaml")
        // 2026-10-14 12:00 UTC: that day's 4.2.0 payload has an unbalanced handler → firing.
        let firedAt: Int64 = 1_791_979_200
        let fired = await RuleTrial.run(
            rules, analysis: AnalysisRunner(source: env.database), store: env.database.alertState, at: firedAt)
        #expect(fired.snapshot.alerts.contains { $0.status == .firing && $0.labels["version"] == "4.2.0" })
        // 2026-10-25 12:00 UTC: no payload that day → resolved.
        let resolvedAt: Int64 = 1_792_929_600
        let resolved = await RuleTrial.run(
            rules, analysis: AnalysisRunner(source: env.database), store: env.database.alertState, at: resolvedAt)
        #expect(resolved.snapshot.alerts.contains { $0.status == .resolved && $0.labels["version"] == "4.2.0" })

        let report = try await Self.report(env, app: Self.notes)
        let alert = try #require(report.alerts.first)
        #expect(report.alerts.count == 1)
        #expect(alert.rule == "handler_hangs" && alert.labels["version"] == "4.2.0")
        #expect(alert.firedAt == firedAt && alert.resolvedAt == resolvedAt && alert.value == 0.5)
        #expect(ReportHTML.document(report).contains("<td>handler_hangs</td>"))
        #expect(
            ReportMarkdown.render(report).contains(
                "| handler_hangs | resolved | 2026-10-14T12:00:00Z | 2026-10-25T12:00:00Z | 0.5000 |"))

        let builder = try Self.builder(env)
        let before = try await builder.build(
            Report.Request(app: Self.notes, days: DayRange(from: "2026-10-01", to: "2026-10-13")), now: resolvedAt)
        #expect(before.alerts.isEmpty)
        let other = try await builder.build(
            Report.Request(app: Self.meter, days: DayRange(from: "2026-10-01", to: "2026-11-30")), now: resolvedAt)
        #expect(other.alerts.isEmpty)
    }

    @Test("the command writes html, md and json; --compare gives deltas; --fail-on sets the exit status")
    func commandLine() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await Self.fill(env) { _, _ in }
        let base = [
            "report", "--db", env.path, "--app", Self.notes, "--from", "2026-10-01", "--to", "2026-11-30",
        ]
        for format in ["html", "md", "json"] {
            let out = env.directory.url.appendingPathComponent("report.\(format)").path
            let result = try await Lifeline.run(base + ["--format", format, "--out", out])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("report: wrote \(out)"))
            let size = try FileManager.default.attributesOfItem(atPath: out)[.size] as? Int ?? 0
            #expect(size > 1_000, "\(format) report is \(size) bytes")
        }

        // Compare: the handler imbalance ratio goes from 0 (4.1.0) to 0.5 (4.2.0).
        let jsonPath = env.directory.url.appendingPathComponent("gate.json").path
        let tripped = try await Lifeline.run(
            base + [
                "--format", "json", "--out", jsonPath, "--compare", "4.1.0..4.2.0",
                "--fail-on", "max_handler_imbalance_ratio>0.2", "--fail-on", "restoration_error_rate>0.99",
            ])
        #expect(tripped.status == 3, "\(tripped.stderr)")
        #expect(tripped.stderr.contains("gate tripped: max_handler_imbalance_ratio>0.2"))
        #expect(!tripped.stderr.contains("gate tripped: restoration_error_rate"))
        let body = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: jsonPath))) as? [String: Any])
        #expect(body["failed"] as? Bool == true)
        let comparison = try #require(body["comparison"] as? [String: Any])
        let figures = try #require(comparison["figures"] as? [[String: Any]])
        let imbalance = try #require(figures.first { $0["name"] as? String == "max_handler_imbalance_ratio" })
        #expect((imbalance["base"] as? NSNumber)?.doubleValue == 0)
        #expect((imbalance["target"] as? NSNumber)?.doubleValue == 0.5)
        #expect((imbalance["delta"] as? NSNumber)?.doubleValue == 0.5)

        // Same gate judged on 4.1.0 (balanced): passes; an alert query works as a gate too.
        let passed = try await Lifeline.run(
            base + [
                "--format", "md", "--out", "-", "--versions", "4.1.0", "--fail-on", "max_handler_imbalance_ratio>0.2",
                "--fail-on", "exit_rate{reason=\"AppWatchdog\"} > 5000",
            ])
        #expect(passed.status == 0, "\(passed.stderr)")
        #expect(passed.stdout.contains("## Release gates"))

        // Bad gate, unknown app, unknown version: clear errors.
        let badGate = try await Lifeline.run(base + ["--fail-on", "crashiness>1"])
        #expect(badGate.status == 64)
        #expect(badGate.stderr.contains("'crashiness' is neither a report figure"))
        let unknownApp = try await Lifeline.run(["report", "--db", env.path, "--app", "com.example.none"])
        #expect(unknownApp.status == 1)
        #expect(unknownApp.stderr.contains("no app com.example.none"))
        let unknownVersion = try await Lifeline.run(base + ["--compare", "4.1.0..9.9.9", "--out", "-"])
        #expect(unknownVersion.status == 1)
        #expect(unknownVersion.stderr.contains("no metric payloads of version 9.9.9"))
    }

    @Test(
        "the HTML report renders in headless Chromium without console errors",
        .enabled(if: Chromium.isAvailableOrRequired, "chromium is not installed (CI installs it)"))
    func rendersInChromium() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await Self.fill(env) { _, _ in }
        let html = env.directory.url.appendingPathComponent("report.html")
        try Data(ReportHTML.document(try await Self.report(env, app: Self.notes)).utf8).write(to: html)
        try await Chromium.expectRenders(html)
    }
}
