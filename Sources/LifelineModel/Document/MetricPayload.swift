/// An `MXMetricPayload`.
package struct MetricPayload: Sendable, Equatable {
    package var begin: Timestamp?
    package var end: Timestamp?
    /// `metaData` plus the top-level `appVersion` in ``DeviceMeta/appVersion``.
    package var meta: DeviceMeta
    /// Non-zero and zero counters present in the document (missing ones are simply absent).
    package var exits: [ExitCount]
    package var signposts: [SignpostMetric]
    package var histograms: [NamedHistogram]
    package var scalars: [ScalarMetric]

    package init(
        begin: Timestamp?, end: Timestamp?, meta: DeviceMeta, exits: [ExitCount] = [],
        signposts: [SignpostMetric] = [], histograms: [NamedHistogram] = [], scalars: [ScalarMetric] = []
    ) {
        self.begin = begin
        self.end = end
        self.meta = meta
        self.exits = exits
        self.signposts = signposts
        self.histograms = histograms
        self.scalars = scalars
    }
}
