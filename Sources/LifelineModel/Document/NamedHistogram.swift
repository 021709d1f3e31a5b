/// A named histogram of a metric payload. Names are `section.key`, e.g.
/// `applicationLaunchMetrics.histogrammedTimeToFirstDrawKey`,
/// `applicationResponsivenessMetrics.histogrammedAppHangTime`,
/// `cellularConditionMetrics.cellConditionTime`.
package struct NamedHistogram: Sendable, Equatable {
    package var name: String
    package var histogram: Histogram

    package init(name: String, histogram: Histogram) {
        self.name = name
        self.histogram = histogram
    }
}
