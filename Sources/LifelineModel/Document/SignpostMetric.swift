/// One entry of `signpostMetrics`.
package struct SignpostMetric: Sendable, Equatable {
    package var category: String
    package var name: String
    package var totalCount: Int64
    /// `signpostIntervalData.histogrammedSignpostDurations` (interval signposts only).
    package var durations: Histogram?
    /// `signpostCumulativeCPUTime`, in ms.
    package var cumulativeCPUTime: Measurement?
    /// `signpostAverageMemory`, in bytes.
    package var averageMemory: Measurement?
    /// `signpostCumulativeLogicalWrites`, in bytes.
    package var cumulativeLogicalWrites: Measurement?
    /// `signpostCumulativeHitchTimeRatio`, in ms per s.
    package var cumulativeHitchTimeRatio: Measurement?

    package init(
        category: String, name: String, totalCount: Int64, durations: Histogram? = nil,
        cumulativeCPUTime: Measurement? = nil, averageMemory: Measurement? = nil,
        cumulativeLogicalWrites: Measurement? = nil, cumulativeHitchTimeRatio: Measurement? = nil
    ) {
        self.category = category
        self.name = name
        self.totalCount = totalCount
        self.durations = durations
        self.cumulativeCPUTime = cumulativeCPUTime
        self.averageMemory = averageMemory
        self.cumulativeLogicalWrites = cumulativeLogicalWrites
        self.cumulativeHitchTimeRatio = cumulativeHitchTimeRatio
    }
}
