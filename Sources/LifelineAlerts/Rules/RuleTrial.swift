import LifelineAlertState
import LifelineAnalysis

/// Evaluates a rule set once, silently, at a given time — what `lifeline rules test` and the
/// scenario tests need. Receivers and routes are dropped, and each rule is evaluated at
/// `time − for` and at `time`, so a condition that holds on the day becomes firing.
package enum RuleTrial {
    /// The outcome: alert states after the last evaluation, and each rule's last evaluation record.
    package struct Result: Sendable {
        package var snapshot: AlertsSnapshot
        package var records: [String: RuleEvaluationRecord]
    }

    /// Runs `rules` against a store (its alert state receives the evaluations).
    package static func run(
        _ rules: RuleSet, analysis: AnalysisRunner, store: any AlertStateStore, at time: Int64
    ) async -> Result {
        var silent = rules
        silent.receivers = []
        silent.route = nil
        let evaluator = AlertEvaluator(
            analysis: analysis, store: store, rules: silent,
            clock: FixedClock(time: time))
        var records: [String: RuleEvaluationRecord] = [:]
        for at in Set(rules.rules.map { time - $0.forSeconds } + [time]).sorted() {
            for record in await evaluator.evaluate(at: at) { records[record.rule] = record }
        }
        return Result(snapshot: await evaluator.snapshot(), records: records)
    }

    /// A clock that stays at one time; every evaluation passes its time explicitly.
    private struct FixedClock: AlertClock {
        let time: Int64
        func now() -> Int64 { time }
        func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
    }
}
