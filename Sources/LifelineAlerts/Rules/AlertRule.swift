import LifelineAnalysis
import LifelineModel

/// A validated alert rule, ready to evaluate.
package struct AlertRule: Sendable, Equatable {
    /// Unique in the rule set; the `alertname` label.
    package var name: String
    /// The group it was written in.
    package var group: String
    /// The query as written.
    package var query: String
    package var measure: Measure
    package var op: ComparisonOperator
    package var threshold: Double
    /// The last `windowDays` UTC days, ending at the evaluation day.
    package var windowDays: Int
    package var groupBy: [GroupDimension]
    /// How long the condition must hold before firing, seconds.
    package var forSeconds: Int64
    /// How long an alert keeps firing after the condition stopped, seconds.
    package var keepFiringForSeconds: Int64
    /// Groups with fewer samples are skipped.
    package var minSamples: Int64
    /// Only this app; `nil`: every app with data (label `app`).
    package var app: String?
    package var labels: [String: String]
    package var annotations: [String: AnnotationTemplate]
    /// Line of the rule in its file.
    package var line: Int

    package init(
        name: String, group: String, query: String, measure: Measure, op: ComparisonOperator, threshold: Double,
        windowDays: Int = 1, groupBy: [GroupDimension] = [], forSeconds: Int64 = 0, keepFiringForSeconds: Int64 = 0,
        minSamples: Int64 = 0, app: String? = nil, labels: [String: String] = [:],
        annotations: [String: AnnotationTemplate] = [:], line: Int = 0
    ) {
        self.name = name
        self.group = group
        self.query = query
        self.measure = measure
        self.op = op
        self.threshold = threshold
        self.windowDays = windowDays
        self.groupBy = groupBy
        self.forSeconds = forSeconds
        self.keepFiringForSeconds = keepFiringForSeconds
        self.minSamples = minSamples
        self.app = app
        self.labels = labels
        self.annotations = annotations
        self.line = line
    }

    /// The scope of this rule for `app` on the UTC day `day`.
    package func scope(app: String, day: UTCDay) -> Scope {
        Scope(
            app: app, days: DayRange(last: day, count: windowDays), groupBy: groupBy)
    }
}
