import AsyncHTTPClient
import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1

/// How one payload's delivery ended.
package struct DeliveryResult: Sendable {
    /// Documents the server stored for the first time (0 when `--out`).
    package var accepted = 0
    /// Documents the server already had, or answered from an idempotent replay.
    package var duplicates = 0
    /// Whether the answer was an `Idempotent-Replayed` replay.
    package var replayed = false
    /// The final HTTP status, `nil` for a connection error (or a file write).
    package var status: Int?
    /// Why it failed, `nil` on success.
    package var failure: String?
    /// Requests made, retries included.
    package var attempts = 1
    /// Time from the first attempt to the final answer.
    package var latency: Duration = .zero

    /// Whether the payload ended stored (or written).
    package var succeeded: Bool { failure == nil }
}

/// Where payloads go: a server, or a directory.
package protocol PayloadSink: Sendable {
    /// Delivers one gzipped payload, retrying as the sink sees fit.
    func deliver(_ payload: GeneratedPayload, gzipped: ByteBuffer) async -> DeliveryResult
}

/// Gzip with the default level; deterministic (no timestamp in the header).
package func gzipPayload(_ json: [UInt8]) -> ByteBuffer {
    var input = ByteBuffer(bytes: json)
    // Compressing an in-memory buffer only fails on allocation failure; an empty buffer then
    // makes the server answer 400, which the simulator reports.
    return (try? input.compress(with: .gzip())) ?? ByteBuffer()
}

/// Writes `.json.gz` files under a directory (`DIR/YYYY-MM-DD/d0000042-metric.json.gz`).
package struct DirectorySink: PayloadSink {
    package let directory: URL

    /// A sink writing under `directory` (created as needed).
    package init(directory: URL) {
        self.directory = directory
    }

    package func deliver(_ payload: GeneratedPayload, gzipped: ByteBuffer) async -> DeliveryResult {
        let start = ContinuousClock.now
        let url = directory.appendingPathComponent(payload.fileName)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(gzipped.readableBytesView).write(to: url)
            return DeliveryResult(accepted: 0, latency: ContinuousClock.now - start)
        } catch {
            return DeliveryResult(failure: "write \(url.path): \(error)", latency: ContinuousClock.now - start)
        }
    }
}

/// Posts payloads to a Lifeline server with the ingest key, retrying connection errors, 429 and
/// 5xx with exponential backoff and jitter (never other 4xx). Every attempt of one payload carries
/// the same `Idempotency-Key`, so a retry is never counted twice.
package struct HTTPSink: PayloadSink {
    package let client: HTTPClient
    package let baseURL: String
    package let key: String
    /// Attempts per payload, the first included.
    package let maxAttempts: Int
    /// First backoff; doubles per retry, capped at ``maxBackoff``.
    package let baseBackoff: Duration
    package let maxBackoff: Duration
    /// Timeout of one request.
    package let timeout: Duration

    /// A sink over `client`; `baseURL` like `http://127.0.0.1:8080`.
    package init(
        client: HTTPClient, baseURL: String, key: String, maxAttempts: Int = 6,
        baseBackoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(5), timeout: Duration = .seconds(30)
    ) {
        self.client = client
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.key = key
        self.maxAttempts = maxAttempts
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.timeout = timeout
    }

    /// An HTTP client sized for `concurrency` parallel uploads (one connection each).
    package static func makeClient(concurrency: Int) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, concurrency))
        configuration.decompression = .disabled
        configuration.httpVersion = .http1Only
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Throws unless `GET /healthz` answers 200 within 5 s (a quick check before a long run).
    package static func checkReachable(client: HTTPClient, baseURL: String) async throws {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        let response = try await client.execute(HTTPClientRequest(url: base + "/healthz"), timeout: .seconds(5))
        _ = try await response.body.collect(upTo: 1 << 16)
        guard response.status.code == 200 else { throw UnhealthyServer(status: Int(response.status.code)) }
    }

    /// `GET /healthz` answered something else than 200.
    package struct UnhealthyServer: Error, CustomStringConvertible {
        package var status: Int
        package var description: String { "GET /healthz answered HTTP \(status)" }
    }

    package func deliver(_ payload: GeneratedPayload, gzipped: ByteBuffer) async -> DeliveryResult {
        let start = ContinuousClock.now
        var request = HTTPClientRequest(url: baseURL + payload.kind.path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Content-Encoding", value: "gzip")
        request.headers.add(name: "Idempotency-Key", value: payload.idempotencyKey)
        var jitter = SplitMix64(seed: stableHash(payload.idempotencyKey, String(start.hashValue)))
        var result = DeliveryResult()
        for attempt in 1...maxAttempts {
            result.attempts = attempt
            var retryAfter: Duration?
            request.body = .bytes(gzipped)
            do {
                let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
                let body = try await response.body.collect(upTo: 1 << 20)
                let status = Int(response.status.code)
                result.status = status
                if (200..<300).contains(status) {
                    let counts = Self.counts(body)
                    result.replayed = response.headers.first(name: "Idempotent-Replayed") == "true"
                    if result.replayed {
                        result.duplicates = counts.accepted + counts.duplicates
                    } else {
                        result.accepted = counts.accepted
                        result.duplicates = counts.duplicates
                    }
                    result.failure = nil
                    result.latency = ContinuousClock.now - start
                    return result
                }
                result.failure = "HTTP \(status): \(String(buffer: body).prefix(300))"
                guard status == 429 || status >= 500 else { break }
                if let header = response.headers.first(name: "Retry-After"), let seconds = Int(header) {
                    retryAfter = .seconds(min(max(seconds, 0), 30))
                }
            } catch {
                result.status = nil
                result.failure = "connection: \(error)"
            }
            guard attempt < maxAttempts else { break }
            let exponential = baseBackoff * (1 << min(attempt - 1, 20))
            let ceiling = min(exponential, maxBackoff)
            let delay = retryAfter ?? ceiling * (0.5 + 0.5 * jitter.unit())
            try? await Task.sleep(for: delay)
        }
        result.latency = ContinuousClock.now - start
        return result
    }

    /// `accepted` and `duplicates` of a `202` answer.
    static func counts(_ body: ByteBuffer) -> (accepted: Int, duplicates: Int) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else {
            return (0, 0)
        }
        return ((object["accepted"] as? Int) ?? 0, (object["duplicates"] as? Int) ?? 0)
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }

    /// Milliseconds as a double.
    package var milliseconds: Double { nanoseconds / 1e6 }
}
