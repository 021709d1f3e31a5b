import CompressNIO
import Foundation
import LifelineKit
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

/// Where payloads go: a server (through LifelineKit's spool), or a directory.
package protocol PayloadSink: Sendable {
    /// Delivers one payload, retrying as the sink sees fit.
    func deliver(_ payload: GeneratedPayload) async -> DeliveryResult
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

    package func deliver(_ payload: GeneratedPayload) async -> DeliveryResult {
        let start = ContinuousClock.now
        let gzipped = gzipPayload(payload.json)
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

/// Delivers payloads through LifelineKit, the client apps embed: each payload is written to the spool
/// first (named by its SHA-256), then uploaded gzipped with that hash as `Idempotency-Key`, oldest first,
/// retrying transport errors, 408, 429 and 5xx with backoff (honouring `Retry-After`), dropping other 4xx.
/// A payload not delivered when the sink gives up stays in the spool for `lifeline simulate --drain`.
package struct SpoolSink: PayloadSink {
    package let client: LifelineClient
    package let spool: URL

    /// A sink over a LifelineKit client on `spool`.
    /// - Parameters:
    ///   - attempts: requests per payload before it is left in the spool; `nil`: until ``giveUp(at:)``.
    ///   - concurrency: uploads in flight.
    package static func open(
        url: URL, key: String, spool: URL, concurrency: Int, attempts: Int?, baseBackoff: Duration = .milliseconds(100),
        maxBackoff: Duration = .seconds(5), timeout: Duration = .seconds(30)
    ) async throws -> SpoolSink {
        let configuration = LifelineConfiguration(
            serverURL: url, ingestKey: key, spoolDirectory: spool, maxSpoolBytes: Int.max,
            maxReportAge: .seconds(3650 * 86_400), maxConcurrentUploads: max(1, concurrency),
            retry: RetryPolicy(
                baseDelay: baseBackoff, maxDelay: maxBackoff, maxRetryAfter: .seconds(60), storageWait: .seconds(10),
                maxAttemptsPerPass: attempts),
            requestTimeout: timeout)
        return SpoolSink(client: try await Lifeline.start(configuration), spool: spool)
    }

    /// Stops starting uploads at `deadline`; what is left stays in the spool.
    package func giveUp(at deadline: ContinuousClock.Instant) async {
        await client.giveUp(at: deadline)
    }

    /// Payloads in the spool, not delivered.
    package var left: Int {
        get async { await client.pendingReports }
    }

    /// What ``drain()`` did.
    package struct DrainReport: Sendable {
        /// Payloads in the spool when it started.
        package var found = 0
        /// Payloads the server acknowledged (duplicates included) and duplicates among them.
        package var delivered = 0
        package var duplicates = 0
        /// Payloads refused for good, by `status code`.
        package var dropped: [String: Int] = [:]
        /// Requests repeated.
        package var retries = 0
        /// Payloads still in the spool.
        package var left = 0
    }

    /// Uploads what the spool holds until it is empty, every payload is out of attempts, or the deadline
    /// of ``giveUp(at:)`` passes.
    package func drain() async -> DrainReport {
        var report = DrainReport()
        report.found = await client.pendingReports
        report.left = await client.flush()
        let counters = await client.counters
        report.delivered = counters.delivered
        report.duplicates = counters.duplicates
        report.retries = counters.retries
        for (reason, count) in counters.dropped { report.dropped[reason.description, default: 0] += count }
        return report
    }

    package func deliver(_ payload: GeneratedPayload) async -> DeliveryResult {
        let start = ContinuousClock.now
        let kind: ReportKind = payload.kind == .metric ? .metric : .diagnostic
        var result = DeliveryResult()
        do {
            let (submitted, outcome) = try await client.submitAndWait(Data(payload.json), kind: kind)
            result = Self.result(submitted, outcome)
        } catch {
            result.failure = "spool \(spool.path): \(error)"
        }
        result.latency = ContinuousClock.now - start
        return result
    }

    /// The delivery result of a payload's final outcome in this pass.
    static func result(_ submitted: SubmitResult, _ outcome: UploadOutcome?) -> DeliveryResult {
        var result = DeliveryResult()
        guard let outcome else {
            if case .alreadyDelivered = submitted {
                result.duplicates = 1
            } else {
                result.failure = "not uploaded (the client stopped)"
            }
            return result
        }
        result.attempts = max(1, outcome.attempts)
        switch outcome.event {
        case .delivered(let accepted, let duplicates, let replayed):
            result.status = 202
            result.accepted = accepted
            result.duplicates = duplicates
            result.replayed = replayed
        case .dropped(let reason, let message):
            result.status = reason.status
            result.failure = "dropped: \(message)"
        case .deferred(let status, let message):
            result.status = status
            result.failure = "left in the spool: \(message)"
        case .retrying(let status, _, let message):
            result.status = status
            result.failure = message
        case .evicted:
            result.failure = "evicted from the spool"
        }
        return result
    }

    /// Throws unless `GET /healthz` answers 200 within 5 s (a quick check before a long run).
    package static func checkReachable(_ url: URL) async throws {
        var request = URLRequest(url: url.appendingPathComponent("healthz"))
        request.timeoutInterval = 5
        let (_, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw UnhealthyServer(status: status) }
    }

    /// `GET /healthz` answered something else than 200.
    package struct UnhealthyServer: Error, CustomStringConvertible {
        package var status: Int
        package var description: String { "GET /healthz answered HTTP \(status)" }
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
