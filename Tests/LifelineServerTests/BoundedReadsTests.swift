import Foundation
import HTTPTypes
import HummingbirdTesting
import LifelineAnalysis
@testable import LifelinePostgres
import LifelineServer
@testable import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

/// Every read is bounded (issue 24): the row cap and its paging, the source-row budget, the time
/// budget and the limit on reads at once, on a real store filled with many version × OS × device
/// cells, over a real server on 127.0.0.1.
@Suite("Bounded reads: row cap and paging, source-row budget, time budget, reads at once")
struct BoundedReadsTests {
    static let app = "com.example.bounded"
    static let versions = ["1.0", "1.1", "2.0", "2.1", "3.0", "10.0"]
    static let oses = ["iPhone OS 17.1 (21B80)", "iPhone OS 17.4 (21E219)", "iPhone OS 18.0 (22A3354)", "iOS 26.0"]
    static let devices = ["iPhone14,2", "iPhone15,2", "iPad13,4"]
    /// Every endpoint answering more than the test cap (50) with this fill, grouped by version, OS and device.
    static let query = "from=2026-10-01&to=2026-10-31&group_by=version,os,device"

    /// One metric payload per version × OS × device: 72 groups, 288 exit rows, 144 signpost rows.
    static var documents: [String] {
        var documents: [String] = []
        var index = 0
        for version in versions {
            for os in oses {
                for device in devices {
                    index += 1
                    let text = String(
                        decoding: metricPayload(index: index, bundle: app, version: version, day: index % 28 + 1),
                        as: UTF8.self)
                    documents.append(
                        text.replacingOccurrences(of: "iPhone OS 17.4 (21E219)", with: os)
                            .replacingOccurrences(of: "\"iPhone15,2\"", with: "\"\(device)\""))
                }
            }
        }
        return documents
    }

    /// A filled store, a read token, and `body`.
    func withFilled(_ backend: Backend, _ body: (TestStore, String) async throws -> Void) async throws {
        try await TestStore.with(backend) { env in
            try await env.ingest(Self.documents, app: Self.app)
            try await body(env, try await env.token(.read))
        }
    }

    static func get(
        _ client: any TestClientProtocol, _ uri: String, _ token: String
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: [String: Any]) {
        let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"])
        return (response.status, response.headers, try json(response.body))
    }

    /// A row as canonical JSON text (sorted keys), to compare answers exactly.
    static func canonical(_ row: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: row, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test(
        "over the cap an answer is truncated; paging with the cursor gives the uncapped answer exactly, in order",
        arguments: Backend.allCases)
    func pagingCoversTheAnswer(_ backend: Backend) async throws {
        try await withFilled(backend) { env, token in
            let endpoints: [(path: String, rowsKey: String)] = [
                ("exits", "rows"), ("signposts", "rows"), ("expiration-handlers", "rows"), ("launch", "rows"),
            ]
            // The uncapped answers (the cap far above them).
            var uncapped = env.config()
            uncapped.maxRows = 100_000
            let full = try await env.withLiveServer(uncapped) { client in
                var answers: [String: [String]] = [:]
                for endpoint in endpoints {
                    let (status, _, body) = try await Self.get(
                        client, "/v1/apps/\(Self.app)/\(endpoint.path)?\(Self.query)", token)
                    #expect(status == .ok)
                    #expect(body["truncated"] as? Bool == false)
                    #expect(body["next_cursor"] == nil)
                    answers[endpoint.path] = try (body[endpoint.rowsKey] as? [Any] ?? []).map(Self.canonical)
                }
                return answers
            }
            #expect(full["exits"]?.count == 288)
            #expect(full["signposts"]?.count == 144)
            #expect(full["expiration-handlers"]?.count == 72)
            #expect(full["launch"]?.count == 72)

            var capped = env.config()
            capped.maxRows = 50
            try await env.withLiveServer(capped) { client in
                for endpoint in endpoints {
                    for limit in [nil, 7] as [Int?] {
                        var rows: [String] = []
                        var cursor: String?
                        var pages = 0
                        repeat {
                            var uri = "/v1/apps/\(Self.app)/\(endpoint.path)?\(Self.query)"
                            if let limit { uri += "&limit=\(limit)" }
                            if let cursor { uri += "&cursor=\(cursor)" }
                            let (status, _, body) = try await Self.get(client, uri, token)
                            try #require(status == .ok, "\(uri): \(body)")
                            let page = try (body[endpoint.rowsKey] as? [Any] ?? []).map(Self.canonical)
                            cursor = body["next_cursor"] as? String
                            #expect(body["truncated"] as? Bool == (cursor != nil))
                            if cursor != nil { #expect(page.count == (limit ?? 50)) }
                            rows += page
                            pages += 1
                        } while cursor != nil && pages < 100
                        let expected = try #require(full[endpoint.path])
                        #expect(pages == (expected.count + (limit ?? 50) - 1) / (limit ?? 50))
                        #expect(rows == expected, "\(endpoint.path) limit \(limit ?? 50)")
                    }
                }
            }
        }
    }

    @Test("a bad limit or cursor is a 400 naming the parameter", arguments: Backend.allCases)
    func badPagingParameters(_ backend: Backend) async throws {
        try await withFilled(backend) { env, token in
            var config = env.config()
            config.maxRows = 50
            try await env.withLiveServer(config) { client in
                let base = "/v1/apps/\(Self.app)/exits?\(Self.query)"
                let (_, _, first) = try await Self.get(client, base, token)
                let cursor = try #require(first["next_cursor"] as? String)
                for (suffix, parameter) in [
                    ("&limit=0", "limit"), ("&limit=51", "limit"), ("&limit=abc", "limit"),
                    ("&cursor=not-a-cursor", "cursor"), ("&cursor=", "cursor"),
                    // A cursor of another query (another grouping).
                    ("&cursor=\(cursor)&version=1.0", "cursor"),
                ] {
                    let (status, _, body) = try await Self.get(client, base + suffix, token)
                    #expect(status == .badRequest, "\(suffix)")
                    let error = body["error"] as? [String: Any]
                    #expect(error?["code"] as? String == "invalid_parameter")
                    #expect((error?["message"] as? String)?.hasPrefix("\(parameter):") == true, "\(suffix): \(body)")
                }
                // Crashes page too; its limit is bounded by the same cap.
                let (status, _, body) = try await Self.get(client, "/v1/apps/\(Self.app)/crashes?limit=51", token)
                #expect(status == .badRequest)
                #expect(((body["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("limit:") == true)
                let (okStatus, _, crashes) = try await Self.get(client, "/v1/apps/\(Self.app)/crashes?limit=5", token)
                #expect(okStatus == .ok)
                #expect(crashes["truncated"] as? Bool == false)
            }
        }
    }

    @Test(
        "a read past the source-row budget is refused with 422 query_too_large; a narrower one answers",
        arguments: Backend.allCases)
    func sourceRowBudget(_ backend: Backend) async throws {
        try await withFilled(backend) { env, token in
            var config = env.config()
            config.reads.maxSourceRows = 100
            try await env.withLiveServer(config) { client in
                for path in ["exits", "signposts", "launch"] {
                    let (status, _, body) = try await Self.get(
                        client, "/v1/apps/\(Self.app)/\(path)?\(Self.query)", token)
                    #expect(status == .unprocessableContent, "\(path): \(body)")
                    let error = body["error"] as? [String: Any]
                    #expect(error?["code"] as? String == "query_too_large")
                    #expect((error?["message"] as? String)?.contains("query.max_source_rows") == true)
                }
                // Grouped by version only: 6 groups, 24 exit rows.
                let (status, _, body) = try await Self.get(
                    client, "/v1/apps/\(Self.app)/exits?from=2026-10-01&to=2026-10-31&group_by=version", token)
                #expect(status == .ok, "\(body)")
                #expect((body["rows"] as? [Any])?.count == 24)
            }
        }
    }

    @Test("a read past its time budget answers 503 query_timeout with Retry-After", arguments: Backend.allCases)
    func timeBudgetOverHTTP(_ backend: Backend) async throws {
        try await withFilled(backend) { env, token in
            var config = env.config()
            config.reads.timeout = .nanoseconds(1)
            try await env.withLiveServer(config) { client in
                let (status, headers, body) = try await Self.get(
                    client, "/v1/apps/\(Self.app)/exits?\(Self.query)", token)
                #expect(status == .serviceUnavailable, "\(body)")
                #expect((body["error"] as? [String: Any])?["code"] as? String == "query_timeout")
                #expect(headers[.retryAfter] != nil)
            }
        }
    }

    @Test("SQLite: a running statement is interrupted at the deadline and its connection reads again")
    func sqliteStatementInterrupted() async throws {
        try await TestStore.with(.sqlite) { env in
            let database = try #require(env.database)
            let lease = try await database.readers.lease()
            let budget = ReadBudget(maxRows: 1_000, timeout: .milliseconds(200))
            // Counting to 10^11 takes minutes: only the progress handler ends it. The time is taken
            // on the reader thread (under the whole suite the threads may be busy before it starts).
            let (result, elapsed) = try await StoreThreads.reads.runIfActive {
                () -> (Result<Int64, ReadLimitError>, Duration) in
                let started = ContinuousClock.now
                do {
                    let count = try lease.connection.bounded(by: budget) {
                        try lease.connection.query(
                            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000000) SELECT count(*) FROM c"
                        ) { $0.int64(0) }.first ?? 0
                    }
                    return (.success(count), ContinuousClock.now - started)
                } catch let error as ReadLimitError {
                    return (.failure(error), ContinuousClock.now - started)
                }
            }
            #expect(throws: ReadLimitError.self) { try result.get() }
            #expect((try? result.get()) == nil)
            if case .failure(let error) = result { #expect(error.code == .timeout) }
            #expect(elapsed < .seconds(3), "interrupted after \(elapsed)")
            // The same connection, back in the pool, answers the next read.
            database.readers.giveBack(lease)
            let apps = try await AnalysisRunner(source: database).analyze { try await $0.apps() }
            #expect(apps.isEmpty)
            let again = try await database.readers.lease()
            let one = try await StoreThreads.reads.runIfActive {
                try again.connection.query("SELECT 1") { $0.int64(0) }
            }
            database.readers.giveBack(again)
            #expect(one == [1])
        }
    }

    @Test("PostgreSQL: a statement running past the deadline is cancelled (query_timeout) and the next read works")
    func postgresStatementCancelled() async throws {
        try await TestStore.with(.postgres) { env in
            let store = try #require(env.postgres)
            let budget = ReadBudget(maxRows: 1_000, timeout: .milliseconds(300))
            let started = ContinuousClock.now
            let error = await #expect(throws: ReadLimitError.self) {
                try await ReadBudget.$current.withValue(budget) {
                    try await store.read { reader in
                        let reader = try #require(reader as? PostgresReader)
                        return try await reader.rows("SELECT pg_sleep(10)").count
                    }
                }
            }
            #expect(error?.code == .timeout)
            // Well before pg_sleep's 10 s (3.6 s was seen with the whole suite on two cores).
            #expect(ContinuousClock.now - started < .seconds(8))
            let apps = try await AnalysisRunner(source: store).analyze { try await $0.apps() }
            #expect(apps.isEmpty)
        }
    }

    @Test(
        "reads beyond query.max_concurrent wait at most query.queue_wait_seconds, then fail with too_many_reads",
        arguments: Backend.allCases)
    func concurrencyLimit(_ backend: Backend) async throws {
        try await withFilled(backend) { env, _ in
            var limits = ReadLimits()
            limits.maxConcurrent = 1
            limits.queueWait = .milliseconds(500)
            let runner = AnalysisRunner(source: env.source, limits: limits)
            let (holding, hold) = AsyncStream<Void>.makeStream()
            let (started, start) = AsyncStream<Void>.makeStream()
            // One read holds the only slot until told to end.
            async let first: [AppInfo] = runner.analyze { analyzer in
                start.yield()
                for await _ in holding { break }
                return try await analyzer.apps()
            }
            for await _ in started { break }
            let waited = ContinuousClock.now
            await #expect(throws: ReadLimitError.self) { try await runner.analyze { try await $0.apps() } }
            let elapsed = ContinuousClock.now - waited
            #expect(elapsed >= .milliseconds(490) && elapsed < .seconds(3), "\(elapsed)")
            // A read that finds the slot taken waits for it, and runs when it is given back.
            async let second = runner.analyze { try await $0.apps().count }
            try await Task.sleep(for: .milliseconds(50))
            hold.yield()
            #expect(try await first.map(\.bundleID) == [Self.app])
            #expect(try await second == 1)
            #expect(runner.gate?.running == 0)
        }
    }

    @Test("over HTTP, reads beyond the limit answer 503 too_many_reads with Retry-After", arguments: Backend.allCases)
    func concurrencyOverHTTP(_ backend: Backend) async throws {
        try await withFilled(backend) { env, token in
            var config = env.config()
            config.reads.maxConcurrent = 1
            config.reads.queueWait = .zero
            try await env.withLiveServer(config) { client in
                // Separate connections, every request sent before any answer is read.
                let port = try #require(client.port)
                let connections = try (0..<16).map { _ in try RawConnection(port: port) }
                for connection in connections {
                    try connection.send(
                        "GET /v1/apps/\(Self.app)/exits?\(Self.query) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            + "Authorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
                }
                var statuses: [(HTTPResponse.Status, String?, Bool)] = []
                for connection in connections {
                    let (text, _) = try await connection.receive(timeout: .seconds(30))
                    let status = HTTPResponse.Status(code: Int(text.dropFirst(9).prefix(3)) ?? 0)
                    let code = text.range(of: "\"code\":\"").map { text[$0.upperBound...].prefix { $0 != "\"" } }
                    statuses.append((status, code.map(String.init), text.lowercased().contains("\r\nretry-after:")))
                }
                #expect(statuses.contains { $0.0 == .ok })
                let refused = statuses.filter { $0.0 != .ok }
                #expect(!refused.isEmpty)
                for answer in refused {
                    #expect(answer.0 == .serviceUnavailable && answer.1 == "too_many_reads" && answer.2)
                }
            }
        }
    }

    @Test("the query: section of the config file is checked: ranges and unknown keys are named")
    func configSection() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let good = try env.write(
            "query.yaml",
            "query:\n  max_rows: 500\n  max_source_rows: 20000\n  timeout_seconds: 2.5\n  max_concurrent: 3\n"
                + "  queue_wait_seconds: 0\ndatabase:\n  explorer_write_seconds: 0.25\n"
                + "  explorer_version_rows: 16384\n  explorer_version_seconds: 4\n")
        let loaded = try await Lifeline.run(["prune", "--db", env.path, "--config", good, "--dry-run"])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        for (text, message) in [
            ("query:\n  max_rows: 0\n", "query.max_rows must be 1…1000000, got 0"),
            ("query:\n  max_source_rows: -5\n", "query.max_source_rows must be 1…100000000, got -5"),
            ("query:\n  timeout_seconds: 0\n", "query.timeout_seconds must be 0.001…3600, got 0.0"),
            ("query:\n  max_concurrent: 5000\n", "query.max_concurrent must be 1…1024, got 5000"),
            ("query:\n  queue_wait_seconds: 61\n", "query.queue_wait_seconds must be 0…60, got 61.0"),
            ("query:\n  max_rowz: 10\n", "query.max_rowz is not a known key"),
            // The SQLite writer's hold on the explorer's rows (ExplorerStage), beside the reads.
            (
                "database:\n  explorer_write_seconds: 61\n",
                "database.explorer_write_seconds must be 0…60, got 61.0"
            ),
            (
                "database:\n  explorer_version_seconds: 61\n",
                "database.explorer_version_seconds must be 0…60, got 61.0"
            ),
            (
                "database:\n  explorer_version_rows: -1\n",
                "database.explorer_version_rows must be 0…1000000, got -1"
            ),
        ] {
            let file = try env.write("bad.yaml", text)
            let refused = try await Lifeline.run(["prune", "--db", env.path, "--config", file, "--dry-run"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }
    }
}
