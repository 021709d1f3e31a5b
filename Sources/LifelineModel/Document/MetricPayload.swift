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
    /// iOS 27 reports (`"version": "2.0.0"`): the metrics per app state (`stateEntries`).
    package var stateEntries: [StateEntry] = []
    /// iOS 27 reports: the ~3-hour interval slices beside the full-day entry.
    package var slices: [IntervalSlice] = []
    /// Whether this payload is a day of usage of one device. False for an iOS 27 zero-length
    /// report (`begin == end`), which carries only the disk-space snapshot.
    package var isDeviceDay = true
    /// Which format the document was sent in.
    package var format: PayloadFormat = .legacy
    /// Whether a 2.0.0 payload's buckets were already turned into the legacy convention
    /// (``withLegacyBucketBounds`` applies once).
    package var hasLegacyBucketBounds = false

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
