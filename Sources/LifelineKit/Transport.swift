import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The answer to one upload.
struct HTTPAnswer: Sendable {
    var status: Int
    var body: Data
    /// `Retry-After`, as a delay from now.
    var retryAfter: Duration?
    /// `Idempotent-Replayed: true`: the server answered an earlier request with the same key.
    var replayed: Bool

    /// `accepted` and `duplicates` of a 2xx answer.
    var counts: (accepted: Int, duplicates: Int) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return (0, 0) }
        return ((object["accepted"] as? Int) ?? 0, (object["duplicates"] as? Int) ?? 0)
    }

    /// The server's `{"error": {"code", "message"}}`, if the body is one.
    var error: (code: String, message: String)? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let error = object["error"] as? [String: Any], let code = error["code"] as? String
        else { return nil }
        return (code, (error["message"] as? String) ?? "")
    }
}

/// Posts gzipped reports with URLSession (foreground, no cache, no cookies).
struct Transport: Sendable {
    let session: URLSession
    let baseURL: URL
    let key: String
    let timeout: Duration

    init(baseURL: URL, key: String, timeout: Duration, maxConnections: Int) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnections)
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForRequest = timeout.seconds
        session = URLSession(configuration: configuration)
        self.baseURL = baseURL
        self.key = key
        self.timeout = timeout
    }

    /// Posts `gzipped` to the kind's endpoint with `Idempotency-Key: id`; throws on a transport error.
    func post(_ gzipped: Data, kind: ReportKind, id: String) async throws -> HTTPAnswer {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + kind.path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout.seconds)
        request.httpMethod = "POST"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.setValue(id, forHTTPHeaderField: "Idempotency-Key")
        request.setValue("LifelineKit/\(LifelineKitVersion.string)", forHTTPHeaderField: "User-Agent")
        request.httpBody = gzipped
        let (body, response) = try await Self.data(for: request, on: session)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return HTTPAnswer(
            status: http.statusCode, body: body, retryAfter: Self.retryAfter(header(http, "Retry-After")),
            replayed: header(http, "Idempotent-Replayed")?.lowercased() == "true")
    }

    /// `session.data(for:)`, cancelled without holding the calling task's lock. The Foundation
    /// of Swift on Linux cancels `data(for:)`'s transfer from inside the task's cancellation, under
    /// the task's status lock, and waits there for the session's queue; a transfer finishing at
    /// that moment holds that queue and waits for the same lock to resume the task. Both wait for
    /// ever (swift-corelibs-foundation #5412: a consent denied while an upload ended hung the
    /// client, and the test process with it). Here the cancellation only schedules the transfer's
    /// cancel, which runs on a queue of its own, after the lock is released.
    static func data(for request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let transfer = Transfer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { body, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (body ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                transfer.start(task)
            }
        } onCancel: {
            DispatchQueue.global().async { transfer.cancel() }
        }
    }

    /// The transfer of one ``data(for:on:)``, started once and cancelled at most once, in
    /// either order.
    private final class Transfer: @unchecked Sendable {
        private let lock = NSLock()
        private var task: URLSessionDataTask?
        private var cancelled = false

        func start(_ task: URLSessionDataTask) {
            let cancelled = lock.withLock {
                self.task = task
                return self.cancelled
            }
            task.resume()
            if cancelled { task.cancel() }
        }

        func cancel() {
            let task = lock.withLock {
                cancelled = true
                return self.task
            }
            task?.cancel()
        }
    }

    private func header(_ response: HTTPURLResponse, _ name: String) -> String? {
        for (key, value) in response.allHeaderFields {
            if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame { return value as? String }
        }
        return nil
    }

    /// `Retry-After` as delay-seconds or an HTTP date, from now (never negative).
    static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64((date.timeIntervalSince(now) * 1000).rounded(.up))))
    }
}

extension Duration {
    /// Seconds as a `TimeInterval`.
    var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}

/// The version of this package (semantic versioning, see the README).
public enum LifelineKitVersion {
    /// `MAJOR.MINOR.PATCH`.
    public static let string = "1.0.0"
}
