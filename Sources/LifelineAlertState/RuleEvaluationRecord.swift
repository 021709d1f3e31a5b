/// The outcome of the last evaluation of one alert rule.
package struct RuleEvaluationRecord: Sendable, Equatable {
    package var rule: String
    /// Epoch seconds of the evaluation.
    package var lastEval: Int64
    package var durationMilliseconds: Double
    /// A short human summary of the values seen (e.g. `3 groups, max 0.0042`).
    package var valueSummary: String?
    /// Why the evaluation failed, if it did.
    package var error: String?

    package init(
        rule: String, lastEval: Int64, durationMilliseconds: Double, valueSummary: String?, error: String?
    ) {
        self.rule = rule
        self.lastEval = lastEval
        self.durationMilliseconds = durationMilliseconds
        self.valueSummary = valueSummary
        self.error = error
    }
}
