/// One state change of an alert, kept in `alert_history`.
package struct AlertTransition: Sendable, Equatable {
    package var rule: String
    package var fingerprint: String
    package var labels: [String: String]
    package var from: AlertStateRecord.Status
    package var to: AlertStateRecord.Status
    /// Epoch seconds.
    package var at: Int64
    package var value: Double?

    package init(
        rule: String, fingerprint: String, labels: [String: String], from: AlertStateRecord.Status,
        to: AlertStateRecord.Status, at: Int64, value: Double?
    ) {
        self.rule = rule
        self.fingerprint = fingerprint
        self.labels = labels
        self.from = from
        self.to = to
        self.at = at
        self.value = value
    }
}
