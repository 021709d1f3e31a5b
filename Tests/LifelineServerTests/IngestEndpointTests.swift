import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineModel
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

@Suite("Ingest endpoints over a real server on 127.0.0.1, on SQLite and on PostgreSQL")
struct IngestEndpointTests {
    @Test("every shared fixture is accepted, plain and gzip, and stored once", arguments: Backend.allCases)
    func everyFixtureIsAccepted(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            // Fixtures that name their app must be posted with a key of that app.
            let cases: [(file: String, path: String, app: String, documents: Int)] = [
                ("metrics/lifeline-authored__ios17-full.json", "/v1/metrics", "com.example.notes", 1),
                ("metrics/lifeline-authored__sparse-zoneless.json", "/v1/metrics", "com.example.notes", 1),
                ("diagnostics/ChimeHQ_Meter__real_report.json", "/v1/diagnostics", "com.chimehq.Meter", 1),
                ("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json", "/v1/diagnostics", "com.chimehq.Meter", 1),
                ("diagnostics/ChimeHQ_Meter__xcode_simulated_macos13.json", "/v1/diagnostics", "com.chimehq.Edit", 1),
                (
                    "diagnostics/embrace-io_embrace-apple-sdk__ios26-crash_diagnostic_01.json", "/v1/diagnostics",
                    "com.bedroomcode.Splash", 1
                ),
            ]
            var issued: [String: String] = [:]
            for app in Set(cases.map(\.app)) { issued[app] = try await env.token(.ingest, app: app) }
            let tokens = issued
            try await env.withLiveServer { client in
                for (index, fixture) in cases.enumerated() {
                    let data = try Paths.fixture(fixture.file)
                    let gzipped = index % 2 == 0
                    let body = gzipped ? try gzip(data) : ByteBuffer(bytes: data)
                    let response = try await client.execute(
                        uri: fixture.path, method: .post, headers: ingestHeaders(tokens[fixture.app], gzip: gzipped),
                        body: body)
                    #expect(response.status == .accepted, "\(fixture.file): \(String(buffer: response.body))")
                    let answer = try json(response.body)
                    #expect(answer["accepted"] as? Int == fixture.documents, "\(fixture.file)")
                    #expect(answer["duplicates"] as? Int == 0, "\(fixture.file)")
                    #expect((answer["ids"] as? [Int])?.count == fixture.documents, "\(fixture.file)")
                }
            }
            #expect(try await env.payloadCount(app: "com.example.notes", kind: .metric) == 2)
            #expect(try await env.payloadCount(app: "com.chimehq.Meter", kind: .diagnostic) == 2)
            #expect(try await env.payloadCount(app: "com.chimehq.Edit", kind: .diagnostic) == 1)
            #expect(try await env.payloadCount(app: "com.bedroomcode.Splash", kind: .diagnostic) == 1)
        }
    }

    @Test(
        "a report of a major version Lifeline does not read is kept raw, once, answered as such, counted nowhere",
        arguments: Backend.allCases)
    func unknownMajorVersionIsKeptRaw(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            let token = try await env.token(.ingest, app: "com.example.app")
            let admin = try await env.token(.admin)
            let report = Data(
                #"{"version":"3.0.0","timeRange":{"begin":810918462,"end":810918500},"environment":{"bundleIdentifier":"com.example.app"},"someFutureSection":{"x":1}}"#
                    .utf8)
            try await env.withLiveServer { client in
                for (attempt, gzipped) in [(0, true), (1, false)] {
                    let body = gzipped ? try gzip(report) : ByteBuffer(bytes: report)
                    let response = try await client.execute(
                        uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: gzipped), body: body)
                    #expect(response.status == .accepted, "\(String(buffer: response.body))")
                    let answer = try json(response.body)
                    #expect(answer["accepted"] as? Int == 0)
                    #expect(answer["kept_raw"] as? Int == (attempt == 0 ? 1 : 0))
                    #expect(answer["duplicates"] as? Int == (attempt == 0 ? 0 : 1))
                    #expect(answer["reason"] as? String == "unsupported_version")
                    #expect((answer["message"] as? String)?.contains("3.0.0") == true)
                }
                let metrics = try await client.execute(
                    uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(admin)"])
                #expect(String(buffer: metrics.body).contains(#"lifeline_ingest_payloads_total{outcome="kept_raw"} 1"#))
            }
            #expect(try await env.unreadDocumentCount(app: "com.example.app") == 1)
            #expect(try await env.payloadCount(app: "com.example.app", kind: .metric) == 0)
        }
    }

    @Test(
        "the same document posted twice is stored once and answered as a duplicate with the same id",
        arguments: Backend.allCases)
    func duplicateIsNotDoubleCounted(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            let token = try await env.token(.ingest, app: "com.example.app")
            let payload = metricPayload(index: 1)
            try await env.withLiveServer { client in
                let first = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true),
                    body: try gzip(payload))
                #expect(first.status == .accepted)
                // Same content, sent plain this time: still the same document.
                let second = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token), body: ByteBuffer(bytes: payload))
                #expect(second.status == .accepted)
                let a = try json(first.body)
                let b = try json(second.body)
                #expect(a["accepted"] as? Int == 1)
                #expect(b["accepted"] as? Int == 0)
                #expect(b["duplicates"] as? Int == 1)
                #expect(a["ids"] as? [Int] == b["ids"] as? [Int])
            }
            #expect(try await env.payloadCount(app: "com.example.app", kind: .metric) == 1)
        }
    }

    @Test("an array body stores each document and reports duplicates inside it", arguments: Backend.allCases)
    func arrayBodyStoresEachDocument(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            let token = try await env.token(.ingest, app: "com.example.app")
            let one = metricPayload(index: 1)
            let two = metricPayload(index: 2)
            let body = Data("[".utf8) + one + Data(",".utf8) + two + Data(",".utf8) + one + Data("]".utf8)
            try await env.withLiveServer { client in
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true), body: try gzip(body))
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
                let answer = try json(response.body)
                #expect(answer["accepted"] as? Int == 2)
                #expect(answer["duplicates"] as? Int == 1)
                let ids = try #require(answer["ids"] as? [Int])
                #expect(ids.count == 3)
                #expect(ids[0] == ids[2])
                #expect(ids[0] != ids[1])
            }
            #expect(try await env.payloadCount(app: "com.example.app", kind: .metric) == 2)
        }
    }

    @Test("a retried request with the same Idempotency-Key is replayed, not stored again", arguments: Backend.allCases)
    func idempotencyKeyReplays(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            let token = try await env.token(.ingest, app: "com.example.app")
            try await env.withLiveServer { client in
                let first = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, idempotencyKey: "upload-42"),
                    body: ByteBuffer(bytes: metricPayload(index: 1)))
                #expect(first.status == .accepted)
                // A client that re-serialised its payload differently still must not be double-counted.
                let retry = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, idempotencyKey: "upload-42"),
                    body: ByteBuffer(bytes: metricPayload(index: 2)))
                #expect(retry.status == .accepted)
                #expect(retry.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
                let answer = try json(retry.body)
                #expect(answer["accepted"] as? Int == 0)
                #expect(answer["duplicates"] as? Int == 1)
                #expect(answer["ids"] as? [Int] == (try json(first.body))["ids"] as? [Int])
            }
            #expect(try await env.payloadCount(app: "com.example.app", kind: .metric) == 1)
        }
    }

    @Test("health answers without a key, readiness checks the database", arguments: Backend.allCases)
    func healthAndReadiness(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            try await env.withLiveServer { client in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
                #expect(try json(health.body)["status"] as? String == "ok")
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .ok)
                #expect(try json(ready.body)["status"] as? String == "ready")
            }
        }
    }

    @Test("data is still there after a restart: the same document is then a duplicate", arguments: Backend.allCases)
    func dataSurvivesRestart(_ backend: Backend) async throws {
        try await TestStore.with(backend) { env in
            let token = try await env.token(.ingest, app: "com.example.app")
            let payload = try gzip(metricPayload(index: 7))
            let firstIDs = try await env.withLiveServer { client in
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true), body: payload)
                #expect(response.status == .accepted)
                return try json(response.body)["ids"] as? [Int]
            }
            try await env.withLiveServer { client in
                let response = try await client.execute(
                    uri: "/v1/metrics", method: .post, headers: ingestHeaders(token, gzip: true), body: payload)
                #expect(response.status == .accepted)
                let answer = try json(response.body)
                #expect(answer["duplicates"] as? Int == 1)
                #expect(answer["ids"] as? [Int] == firstIDs)
            }
            #expect(try await env.payloadCount(app: "com.example.app", kind: .metric) == 1)
        }
    }
}
