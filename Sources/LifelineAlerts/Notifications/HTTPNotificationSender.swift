import AsyncHTTPClient
import NIOCore

/// Sends notifications with AsyncHTTPClient (the shared client).
package struct HTTPNotificationSender: NotificationSender {
    private let client: HTTPClient

    package init(client: HTTPClient = .shared) {
        self.client = client
    }

    package func post(
        url: String, headers: [String: String], body: [UInt8], timeout: Duration
    ) async throws(NotificationError) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "lifeline-alerts")
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let status: UInt
        do {
            let response = try await client.execute(request, timeout: .milliseconds(max(1, milliseconds)))
            status = response.status.code
            _ = try? await response.body.collect(upTo: 1 << 16)
        } catch {
            throw NotificationError("POST \(url) failed: \(error)", isRetryable: true)
        }
        guard (200..<300).contains(status) else {
            throw NotificationError(
                "POST \(url) answered \(status)", isRetryable: status >= 500 || status == 429 || status == 408)
        }
    }
}
