/// One alert as sent to a receiver (firing, or resolved).
package struct AlertNotice: Sendable, Equatable, Codable {
    /// Firing or resolved.
    package enum Status: String, Sendable, Equatable, Codable {
        case firing
        case resolved
    }

    package var rule: String
    package var fingerprint: String
    package var status: Status
    package var labels: [String: String]
    package var annotations: [String: String]
    /// When it went firing, epoch seconds.
    package var startsAt: Int64
    /// When it resolved, or (for a firing alert sent to Alertmanager) until when it is valid.
    package var endsAt: Int64?
    package var value: Double?
    package var generatorURL: String?
    /// `false` for a re-send of an alert already notified (Alertmanager only).
    package var isChange: Bool
    /// Stable for this one change (rule, fingerprint, new status and when it happened): carried by
    /// the webhook body, so a receiver that hears a change twice can drop the repeat.
    package var dedupKey: String {
        "\(rule)/\(fingerprint)/\(status.rawValue)/\(status == .firing ? startsAt : endsAt ?? startsAt)"
    }

    package init(
        rule: String, fingerprint: String, status: Status, labels: [String: String], annotations: [String: String],
        startsAt: Int64, endsAt: Int64?, value: Double?, generatorURL: String?, isChange: Bool
    ) {
        self.rule = rule
        self.fingerprint = fingerprint
        self.status = status
        self.labels = labels
        self.annotations = annotations
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.value = value
        self.generatorURL = generatorURL
        self.isChange = isChange
    }
}
