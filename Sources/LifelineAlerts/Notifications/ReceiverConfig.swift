/// Where notifications go: a generic JSON webhook or an Alertmanager (`POST /api/v2/alerts`).
package struct ReceiverConfig: Sendable, Equatable {
    /// The protocol spoken to the endpoint.
    package enum Kind: String, Sendable, Equatable {
        /// `POST url` with `{"version", "receiver", "status", "alerts": […]}`; sent on changes only.
        case webhook
        /// `POST url/api/v2/alerts` with an array of alerts; firing alerts are re-sent every
        /// evaluation so Alertmanager does not time them out.
        case alertmanager
    }

    package var name: String
    package var kind: Kind
    /// The endpoint (for Alertmanager: its base URL).
    package var url: String
    /// Extra request headers (e.g. `Authorization`).
    package var headers: [String: String] = [:]
    /// Whether resolved alerts are sent.
    package var sendResolved = true
    /// Attempts per notification before it is dropped (with a log line).
    package var maxAttempts = 5
    /// Delay before the first retry; doubles each time, capped at 60 s.
    package var initialBackoff: Duration = .seconds(1)
    /// Per-request timeout.
    package var timeout: Duration = .seconds(10)
    /// Notifications waiting for this receiver; when full the oldest is dropped (and counted).
    package var queueCapacity = 256

    package init(name: String, kind: Kind, url: String) {
        self.name = name
        self.kind = kind
        self.url = url
    }

    /// The URL posted to.
    package var endpoint: String {
        switch kind {
        case .webhook: url
        case .alertmanager: (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/api/v2/alerts"
        }
    }
}
