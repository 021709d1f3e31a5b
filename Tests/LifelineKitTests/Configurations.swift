import Foundation
import LifelineKit

/// A client configuration with millisecond backoffs, so retries cost tests little time.
func testConfiguration(
    _ server: URL, key: String, spool: URL, requiresConsent: Bool = false, concurrency: Int = 2,
    budget: Int = 20_000_000, attemptsPerPass: Int? = nil, maxRetryAfter: Duration = .seconds(5)
) -> LifelineConfiguration {
    LifelineConfiguration(
        serverURL: server, ingestKey: key, spoolDirectory: spool, requiresConsent: requiresConsent,
        maxSpoolBytes: budget, maxConcurrentUploads: concurrency,
        retry: RetryPolicy(
            baseDelay: .milliseconds(10), maxDelay: .milliseconds(200), maxRetryAfter: maxRetryAfter,
            storageWait: .milliseconds(200), maxAttemptsPerPass: attemptsPerPass),
        requestTimeout: .seconds(5))
}

/// Files of reports in a spool directory (whole ones, under `metric/` and `diagnostic/`).
func spooledFiles(_ spool: URL) -> [String] {
    ["metric", "diagnostic"].flatMap { kind in
        ((try? FileManager.default.contentsOfDirectory(atPath: spool.appendingPathComponent(kind).path)) ?? [])
            .map { "\(kind)/\($0)" }
    }.sorted()
}

/// No server listens there (the client is not expected to upload).
let nowhere = URL(string: "http://127.0.0.1:9") ?? URL(fileURLWithPath: "/")

/// Starts collecting `client`'s outcomes; returns once the stream is registered.
func record(_ client: LifelineClient) async -> OutcomeLog {
    let log = OutcomeLog()
    let stream = await client.outcomes()
    Task {
        for await outcome in stream { log.append(outcome) }
    }
    return log
}

extension OutcomeLog {
    /// Waits until `condition` holds for the outcomes so far (or `timeout` passes; generous, as the recording task
    /// may wait long for a thread of a busy cooperative pool).
    func wait(
        timeout: Duration = .seconds(120), until condition: ([UploadOutcome]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(all.map(\.outcome)) {
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting for outcomes") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension UploadOutcome {
    var isDelivered: Bool {
        if case .delivered = event { return true }
        return false
    }

    var retryStatus: Int?? {
        if case .retrying(let status, _, _) = event { return .some(status) }
        return .none
    }
}
