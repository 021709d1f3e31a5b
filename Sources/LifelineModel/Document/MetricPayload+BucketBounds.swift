extension MetricPayload {
    /// This payload with the histogram buckets of an iOS 27 report in the legacy convention.
    ///
    /// 2.0.0 buckets have inclusive whole-millisecond bounds (280–289 ms) where legacy ones end
    /// where the next begins (280–290 ms). Stored as sent, a fleet sending both formats doubles the
    /// distinct bounds of every rollup cell, which then passes its 128-entry cap and has its
    /// neighbours merged (wider bounds, blurred percentiles). The store writes this form, so the
    /// same bucket has the same bounds whatever the format. Legacy payloads are returned unchanged.
    package var withLegacyBucketBounds: MetricPayload {
        guard format == .v2, !hasLegacyBucketBounds else { return self }
        var copy = self
        copy.hasLegacyBucketBounds = true
        copy.histograms = histograms.map { NamedHistogram(name: $0.name, histogram: Self.halfOpen($0.histogram)) }
        copy.signposts = signposts.map(Self.halfOpen)
        copy.stateEntries = stateEntries.map { entry in
            var entry = entry
            entry.histograms = entry.histograms.map {
                NamedHistogram(name: $0.name, histogram: Self.halfOpen($0.histogram))
            }
            entry.signposts = entry.signposts.map(Self.halfOpen)
            return entry
        }
        return copy
    }

    private static func halfOpen(_ signpost: SignpostMetric) -> SignpostMetric {
        var signpost = signpost
        signpost.durations = signpost.durations.map(halfOpen)
        return signpost
    }

    /// Millisecond buckets with whole bounds `a…b` (`b ≥ a`) become `a…b+1`.
    private static func halfOpen(_ histogram: Histogram) -> Histogram {
        guard histogram.unit == .milliseconds else { return histogram }
        var histogram = histogram
        for index in histogram.buckets.indices {
            guard let start = histogram.buckets[index].start, let end = histogram.buckets[index].end,
                end >= start, start.rounded() == start, end.rounded() == end
            else { continue }
            histogram.buckets[index].end = end + 1
        }
        return histogram
    }
}
