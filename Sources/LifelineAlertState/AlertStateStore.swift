/// Where the alert rule evaluator keeps alert state, history and rule evaluations, so a restart
/// neither re-fires nor forgets. Owned here, by its consumer; each store module implements it
/// (SQL stays there), running its blocking work off Swift's cooperative pool.
package protocol AlertStateStore: Sendable {
    /// Every stored alert (pending, firing, resolved).
    func alertStates() async throws -> [AlertStateRecord]
    /// Records one evaluation of a rule atomically: the rule's outcome, changed alert states,
    /// alerts gone inactive (`deletions`: rule and fingerprint), the state changes and the
    /// notifications they cause (`outbox`; one already stored with the same receiver and dedup
    /// key is not stored again).
    func recordEvaluation(
        _ evaluation: RuleEvaluationRecord, upserts: [AlertStateRecord], deletions: [String],
        transitions: [AlertTransition], outbox: [OutboxMessage]
    ) async throws
    /// Notifications not delivered yet, oldest first, at most `limit`.
    func pendingOutbox(limit: Int) async throws -> [OutboxMessage]
    /// Marks notifications done at `at` (epoch seconds): delivered, or given up after their last
    /// attempt (`failed`).
    func finishOutbox(ids: [Int64], failed: Bool, at: Int64) async throws
    /// The last evaluation of every rule.
    func ruleEvaluations() async throws -> [RuleEvaluationRecord]
    /// State changes at or after `since`, newest first, at most `limit`.
    func alertHistory(since: Int64, limit: Int) async throws -> [AlertTransition]
    /// Forgets the state and last evaluation of every rule not in `rules` (after a reload);
    /// history is kept.
    func forgetAlertRules(except rules: Set<String>) async throws
    /// Deletes resolved alerts resolved before `resolvedBefore`, and history and finished outbox
    /// messages older than `historyBefore`.
    func pruneAlerts(resolvedBefore: Int64, historyBefore: Int64) async throws
}
