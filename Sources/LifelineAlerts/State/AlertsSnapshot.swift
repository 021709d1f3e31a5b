import LifelineAlertState

/// What the evaluator knows at one moment: its rules, their last evaluations, the alerts and the
/// receivers' counters. Read by `GET /v1/alerts` and `GET /v1/rules`.
package struct AlertsSnapshot: Sendable {
    package var rules: RuleSet
    /// The rule file, if the rules came from one.
    package var rulesPath: String?
    /// When the rules were (re)loaded, epoch seconds.
    package var loadedAt: Int64
    /// The last evaluation of each rule, by rule name.
    package var evaluations: [String: RuleEvaluationRecord]
    /// Pending, firing and recently resolved alerts, by rule then labels.
    package var alerts: [AlertStateRecord]
    /// Delivery counters, by receiver name.
    package var receivers: [String: ReceiverStatistics]
    /// Evaluations since start, and how many of them failed, by rule name.
    package var evaluationCounts: [String: EvaluationCount] = [:]
}

/// How often a rule was evaluated since the evaluator started, and how often that failed.
package struct EvaluationCount: Sendable, Equatable {
    package var total = 0
    package var failed = 0

    package init(total: Int = 0, failed: Int = 0) {
        self.total = total
        self.failed = failed
    }
}
