/// A scalar value of a metric payload, named `section.key`, e.g. `memoryMetrics.peakMemoryUsage`,
/// `applicationTimeMetrics.cumulativeForegroundTime`. Averages (`averageValue`, `standardDeviation`,
/// `sampleCount`) fill the optional fields; `sampleCount == 0` means no data.
package struct ScalarMetric: Sendable, Equatable {
    package var name: String
    package var measurement: Measurement
    package var standardDeviation: Double?
    package var sampleCount: Int64?

    package init(name: String, measurement: Measurement, standardDeviation: Double? = nil, sampleCount: Int64? = nil) {
        self.name = name
        self.measurement = measurement
        self.standardDeviation = standardDeviation
        self.sampleCount = sampleCount
    }
}
