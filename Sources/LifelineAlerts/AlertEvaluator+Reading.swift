import LifelineAlertState

/// What the evaluator tells readers (`GET /v1/alerts`, `/v1/rules`, `/metrics`, the report).
extension AlertEvaluator {
    /// Rules, evaluations, alerts and delivery counters now.
    package func snapshot() async -> AlertsSnapshot {
        if isFollower { forgetCachedState() }
        await loadStatesIfNeeded()
        if evaluations.isEmpty, let stored = try? await store.ruleEvaluations() {
            let names = Set(rules.rules.map(\.name))
            for record in stored where names.contains(record.rule) { evaluations[record.rule] = record }
        }
        let alerts = (states ?? [:]).values.flatMap(\.values).sorted {
            ($0.rule, $0.fingerprint) < ($1.rule, $1.fingerprint)
        }
        return AlertsSnapshot(
            rules: rules, rulesPath: rulesPath, loadedAt: loadedAt, evaluations: evaluations, alerts: alerts,
            receivers: notifications.statistics, evaluationCounts: evaluationCounts)
    }

    /// State changes of the last `seconds` before the clock's now, newest first, at most `limit`.
    package func history(lastSeconds seconds: Int64, limit: Int) async -> [AlertTransition] {
        do {
            return try await store.alertHistory(since: clock.now() - seconds, limit: limit)
        } catch {
            logger.error("cannot read alert history", metadata: ["error": "\(error)"])
            return []
        }
    }

    func loadStatesIfNeeded() async {
        guard states == nil else { return }
        do {
            var loaded: [String: [String: AlertStateRecord]] = [:]
            for record in try await store.alertStates() {
                loaded[record.rule, default: [:]][record.fingerprint] = record
            }
            if states == nil { states = loaded }
        } catch {
            logger.error("cannot read alert state", metadata: ["error": "\(error)"])
        }
    }
}
