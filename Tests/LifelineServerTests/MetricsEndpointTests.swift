import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// One sample of the Prometheus text format.
struct PrometheusSample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double
}

/// A small parser of the Prometheus text exposition format (what a scrape reads), strict enough
/// to fail on malformed lines.
enum PrometheusText {
    static func parse(_ text: String) throws -> [PrometheusSample] {
        var samples: [PrometheusSample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            var rest = Substring(line)
            let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
            let name = String(rest[..<nameEnd])
            guard name.range(of: "^[a-zA-Z_:][a-zA-Z0-9_:]*$", options: .regularExpression) != nil else {
                throw TestFailure("bad metric name in \(line)")
            }
            rest = rest[nameEnd...]
            var labels: [String: String] = [:]
            if rest.first == "{" {
                guard let close = rest.lastIndex(of: "}") else { throw TestFailure("unclosed labels in \(line)") }
                let body = rest[rest.index(after: rest.startIndex)..<close]
                let pattern = #"([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)""#
                let regex = try NSRegularExpression(pattern: pattern)
                let string = String(body)
                for match in regex.matches(in: string, range: NSRange(string.startIndex..., in: string)) {
                    let key = String(string[Range(match.range(at: 1), in: string)!])
                    labels[key] = String(string[Range(match.range(at: 2), in: string)!])
                }
                rest = rest[rest.index(after: close)...]
            }
            let fields = rest.split(separator: " ")
            guard let first = fields.first, let value = Double(first) ?? (first == "+Inf" ? .infinity : nil) else {
                throw TestFailure("bad value in \(line)")
            }
            samples.append(PrometheusSample(name: name, labels: labels, value: value))
        }
        return samples
    }
}

extension [PrometheusSample] {
    /// The value of the one sample named `name` whose labels include `labels`.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matching = filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
        return matching.count == 1 ? matching[0].value : nil
    }
}

@Suite("GET /metrics")
struct MetricsEndpointTests {
    static let notes = "com.example.notes"

    /// A server whose /metrics window ends on 2026-10-31 (the test payloads' month).
    static func withServer(
        versionsPerApp: Int = 10,
        _ body: @Sendable (any TestClientProtocol, _ ingest: String, _ read: String) async throws -> Void
    ) async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let ingest = try env.token(.ingest, app: notes)
        let read = try env.token(.read)
        var config = env.config()
        config.metricsLastDay = "2026-10-31"
        config.metricsWindowDays = 31
        config.metricsVersionsPerApp = versionsPerApp
        try await TemporaryDatabase.withLiveServer(config) { client in try await body(client, ingest, read) }
    }

    static func post(_ client: any TestClientProtocol, _ token: String, _ document: Data) async throws
        -> HTTPResponse.Status
    {
        try await client.execute(
            uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true), body: try gzip(document)
        ).status
    }

    /// Scrapes `/metrics` once everything posted is folded: a scrape reads the figures folded so
    /// far without waiting for the aggregator, a query (`GET /v1/apps`) waits for it.
    static func scrape(_ client: any TestClientProtocol, _ token: String) async throws -> [PrometheusSample] {
        let settled = try await client.execute(
            uri: "/v1/apps", method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(settled.status == .ok)
        let response = try await client.execute(
            uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(token)"])
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        return try PrometheusText.parse(String(buffer: response.body))
    }

    /// Four payloads of 4.1.0 (balanced handlers), four of 4.2.0 (20 entered, 10 exited), in October.
    static func ingestFleet(_ client: any TestClientProtocol, _ token: String) async throws {
        for index in 0..<4 {
            #expect(
                try await post(
                    client, token, metricPayload(index: index, bundle: notes, version: "4.1.0", day: 3 + index))
                    == .accepted)
            #expect(
                try await post(
                    client, token,
                    metricPayload(
                        index: 50 + index, bundle: notes, version: "4.2.0", day: 20 + index, entered: 20, exited: 10))
                    == .accepted)
        }
    }

    @Test("service counters: requests by route and status, documents by outcome, writer batches")
    func serviceCounters() async throws {
        try await Self.withServer { client, ingest, read in
            try await Self.ingestFleet(client, ingest)
            #expect(
                try await Self.post(
                    client, ingest, metricPayload(index: 0, bundle: Self.notes, version: "4.1.0", day: 3)) == .accepted)
            let bad = try await client.execute(
                uri: "/v1/metrics", method: .post, headers: ingestHeaders(ingest), body: ByteBuffer(string: "{nope"))
            #expect(bad.status == .badRequest)

            let samples = try await Self.scrape(client, read)
            #expect(samples.value("lifeline_ingest_payloads_total", ["outcome": "accepted"]) == 8)
            #expect(samples.value("lifeline_ingest_payloads_total", ["outcome": "duplicate"]) == 1)
            #expect(samples.value("lifeline_ingest_payloads_total", ["outcome": "refused"]) == 1)
            #expect(
                samples.value(
                    "lifeline_http_requests_total", ["route": "/v1/metrics", "method": "POST", "status": "202"]) == 9)
            #expect(
                samples.value(
                    "lifeline_http_requests_total", ["route": "/v1/metrics", "method": "POST", "status": "400"]) == 1)
            #expect(samples.value("lifeline_ingest_duration_seconds_count") == 10)
            // Every committed request went through one of the counted transactions.
            let transactions = try #require(samples.value("lifeline_writer_transactions_total"))
            #expect(transactions >= 1 && transactions <= 9)
            #expect(samples.value("lifeline_writer_batch_requests_sum") == 9)
            #expect(samples.value("lifeline_writer_batch_requests_count") == transactions)
            #expect(samples.value("lifeline_writer_queue_depth") == 0)

            // The scrape itself is counted by the next one, under its route pattern.
            let again = try await Self.scrape(client, read)
            #expect(again.value("lifeline_http_requests_total", ["route": "/metrics", "status": "200"]) == 1)
        }
    }

    @Test("aggregator figures: no lag once an answer waited for the fold, every document folded, folds counted")
    func aggregatorFigures() async throws {
        try await Self.withServer { client, ingest, read in
            try await Self.ingestFleet(client, ingest)
            let answer = try await client.execute(
                uri: "/v1/apps/\(Self.notes)/exits?from=2026-10-01&to=2026-10-31", method: .get,
                headers: [.authorization: "Bearer \(read)"])
            #expect(answer.status == .ok)
            let samples = try await Self.scrape(client, read)
            #expect(samples.value("lifeline_aggregation_lag_documents") == 0)
            #expect(samples.value("lifeline_aggregation_folded_documents") == 8)
            let folds = try #require(samples.value("lifeline_aggregation_folds_total"))
            #expect(folds >= 1 && folds <= 8)
        }
    }

    @Test("product figures per app and version equal the query API's")
    func productFigures() async throws {
        try await Self.withServer { client, ingest, read in
            try await Self.ingestFleet(client, ingest)
            let samples = try await Self.scrape(client, read)
            #expect(samples.value("lifeline_metrics_window_seconds") == Double(31 * 86_400))
            #expect(samples.value("lifeline_app_metric_payloads", ["app": Self.notes, "version": "4.2.0"]) == 4)

            let response = try await client.execute(
                uri: "/v1/apps/\(Self.notes)/exits?from=2026-10-01&to=2026-10-31&group_by=version", method: .get,
                headers: [.authorization: "Bearer \(read)"])
            let rows = try #require(try json(response.body)["rows"] as? [[String: Any]])
            #expect(!rows.isEmpty)
            for row in rows {
                let labels = [
                    "app": Self.notes, "version": row["version"] as? String ?? "",
                    "state": row["state"] as? String ?? "",
                    "reason": row["reason"] as? String ?? "",
                ]
                #expect(
                    samples.value("lifeline_app_exits", labels) == (row["count"] as? NSNumber)?.doubleValue, "\(row)")
                #expect(
                    samples.value("lifeline_app_exit_rate", labels)
                        == (row["per_1000_device_days"] as? NSNumber)?.doubleValue)
            }
            let handler = ["app": Self.notes, "handler": "ExpirationHandlers/SyncExpirationHandler"]
            #expect(samples.value("lifeline_app_handler_flagged", handler.merging(["version": "4.2.0"]) { $1 }) == 1)
            #expect(samples.value("lifeline_app_handler_flagged", handler.merging(["version": "4.1.0"]) { $1 }) == 0)
            #expect(samples.value("lifeline_app_handler_imbalance", handler.merging(["version": "4.2.0"]) { $1 }) == 40)
            #expect(
                samples.value("lifeline_app_handler_imbalance_ratio", handler.merging(["version": "4.2.0"]) { $1 })
                    == 0.5)
        }
    }

    @Test("versions beyond the per-app limit are folded into version=\"other\"")
    func versionsFolded() async throws {
        try await Self.withServer(versionsPerApp: 1) { client, ingest, read in
            try await Self.ingestFleet(client, ingest)
            #expect(
                try await Self.post(
                    client, ingest, metricPayload(index: 90, bundle: Self.notes, version: "4.2.0", day: 30))
                    == .accepted)
            let samples = try await Self.scrape(client, read)
            let versions = Set(
                samples.filter { $0.name == "lifeline_app_metric_payloads" }.compactMap { $0.labels["version"] })
            #expect(versions == ["4.2.0", "other"])
            #expect(samples.value("lifeline_app_metric_payloads", ["version": "4.2.0"]) == 5)
            #expect(samples.value("lifeline_app_metric_payloads", ["version": "other"]) == 4)
            // The folded group is computed as one scope: 4.1.0's balanced handler is not flagged.
            #expect(samples.value("lifeline_app_handler_flagged", ["version": "other"]) == 0)
        }
    }

    @Test("/metrics needs a read or admin key")
    func needsReadKey() async throws {
        try await Self.withServer { client, ingest, _ in
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            let forbidden = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(ingest)"])
            #expect(forbidden.status == .forbidden)
            #expect(errorCode(forbidden.body) != nil)
        }
    }

    @Test("every metric the Grafana dashboards query is exported")
    func dashboardsQueryExportedMetrics() async throws {
        let folder = Paths.repository.appendingPathComponent("dashboards")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(files.count >= 2)
        var queried = Set<String>()
        for file in files {
            let data = try Data(contentsOf: folder.appendingPathComponent(file))
            let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file)")
            let panels = try #require(dashboard["panels"] as? [[String: Any]], "\(file)")
            var expressions = panels.flatMap {
                ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
            }
            let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
            expressions += variables.compactMap { $0["definition"] as? String }
            #expect(!expressions.isEmpty, "\(file) queries nothing")
            for expression in expressions {
                let regex = try NSRegularExpression(pattern: "lifeline_[a-z0-9_]+")
                for match in regex.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
                    queried.insert(String(expression[Range(match.range, in: expression)!]))
                }
            }
        }
        #expect(queried.count >= 15)
        // A server with every kind of series: rules with a receiver, payloads of both versions.
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let rules = env.directory.url.appendingPathComponent("rules.yaml")
        try Data(
            """
            groups:
              - name: handlers
                rules:
                  - name: handler_hangs
                    query: handler_imbalance_ratio
                    op: ">"
                    threshold: 0.1
                    window: 1d
            receivers:
              - name: ops
                webhook:
                  url: http://127.0.0.1:9/hook
            route:
              receiver: ops
            """.utf8
        ).write(to: rules)
        var config = env.config()
        config.rulesPath = rules.path
        config.metricsLastDay = "2026-11-30"
        config.metricsWindowDays = 61
        let ingest = try env.token(.ingest, app: Self.notes)
        let read = try env.token(.read)
        let names = queried
        try await TemporaryDatabase.withLiveServer(config) { client in
            try await Self.ingestFleet(client, ingest)
            // Restoration signposts (1 November).
            let restoration = try Paths.fixture("metrics/lifeline-authored__ios17-full.json")
            #expect(try await Self.post(client, ingest, restoration) == .accepted)
            let exported = Set(try await Self.scrape(client, read).map(\.name))
            for name in names.sorted() {
                let families = [name, name + "_bucket", name + "_count", name + "_sum"]
                #expect(
                    families.contains { exported.contains($0) }, "\(name) is queried by a dashboard but not exported")
            }
            // Prometheus' own linter on the whole exposition (HELP on every family, base units).
            let response = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(read)"])
            try Self.promtoolCheck(String(buffer: response.body))
        }
    }

    /// `promtool check metrics` (Debian's `prometheus` package) on `text`: no problem reported.
    /// Skipped with a note when promtool is not installed, except in CI (`.ci/run` installs it).
    static func promtoolCheck(_ text: String) throws {
        let candidates = ["/usr/bin/promtool", "/usr/local/bin/promtool"]
        guard let promtool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("promtool is not installed; .ci/run installs Debian's prometheus package")
            } else {
                print("note: promtool not installed; `promtool check metrics` skipped")
            }
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool)
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "promtool check metrics:\n\(report)")
        #expect(report.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(report)")
    }
}
