/// A MetricKit histogram. Buckets are sorted by start (the JSON object's key order is arbitrary).
package struct Histogram: Sendable, Equatable {
    package var unit: MeasurementUnit?
    package var buckets: [HistogramBucket]

    package init(unit: MeasurementUnit?, buckets: [HistogramBucket]) {
        self.unit = unit
        self.buckets = buckets
    }

    /// Sum of the bucket counts.
    package var totalCount: Int64 { buckets.lazy.map(\.count).saturatingSum() }
}
