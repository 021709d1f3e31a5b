/// The stored state of one alert: one (rule, label set) pair of the alert rule evaluator.
package struct AlertStateRecord: Sendable, Equatable {
    /// Where an alert is in its life cycle (Prometheus semantics).
    package enum Status: String, Sendable, Equatable, Codable, CaseIterable {
        /// The condition does not hold (never stored in `alert_state`, only in history).
        case inactive
        /// The condition holds, for less than the rule's `for` so far.
        case pending
        /// The condition has held for `for` (or stopped less than `keep_firing_for` ago).
        case firing
        /// The alert fired and the condition stopped.
        case resolved
    }

    package var rule: String
    /// A stable hash of the sorted labels.
    package var fingerprint: String
    package var labels: [String: String]
    package var annotations: [String: String]
    package var status: Status
    /// When the condition started to hold, epoch seconds.
    package var activeSince: Int64
    /// When the alert went firing.
    package var firedAt: Int64?
    /// When the alert resolved.
    package var resolvedAt: Int64?
    /// The last evaluation at which the condition held.
    package var lastActive: Int64
    package var lastValue: Double?
    package var lastSamples: Int64
    /// The last evaluation of this alert.
    package var lastEval: Int64

    package init(
        rule: String, fingerprint: String, labels: [String: String], annotations: [String: String], status: Status,
        activeSince: Int64, firedAt: Int64? = nil, resolvedAt: Int64? = nil, lastActive: Int64, lastValue: Double?,
        lastSamples: Int64, lastEval: Int64
    ) {
        self.rule = rule
        self.fingerprint = fingerprint
        self.labels = labels
        self.annotations = annotations
        self.status = status
        self.activeSince = activeSince
        self.firedAt = firedAt
        self.resolvedAt = resolvedAt
        self.lastActive = lastActive
        self.lastValue = lastValue
        self.lastSamples = lastSamples
        self.lastEval = lastEval
    }
}
