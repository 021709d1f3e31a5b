/// An app-defined state of an iOS 27 report (`ReportedState`): a screen, an experiment arm…
/// A state is the triple (domain, label, metadata): the same domain and label with other stable
/// metadata is another state.
package struct ReportedState: Sendable, Hashable, Comparable {
    package var domain: String
    package var label: String
    /// The `stableMetadata` as a canonical JSON object (keys sorted, values as their JSON text:
    /// `{"userTier":"premium"}`); `{}` when there is none.
    package var metadata: String

    package init(domain: String, label: String, metadata: String = "{}") {
        self.domain = domain
        self.label = label
        self.metadata = metadata
    }

    package static func < (a: ReportedState, b: ReportedState) -> Bool {
        (a.domain, a.label, a.metadata) < (b.domain, b.label, b.metadata)
    }
}

/// The metrics of a metric report observed while one app state was active (`stateEntries`), or
/// the states of its full-day interval entry with their active time.
package struct StateEntry: Sendable, Equatable {
    package var state: ReportedState
    /// Seconds the state was active in the report's range (the state's `duration`), if given.
    package var activeSeconds: Double?
    package var exits: [ExitCount]
    package var histograms: [NamedHistogram]
    package var signposts: [SignpostMetric]

    package init(
        state: ReportedState, activeSeconds: Double? = nil, exits: [ExitCount] = [], histograms: [NamedHistogram] = [],
        signposts: [SignpostMetric] = []
    ) {
        self.state = state
        self.activeSeconds = activeSeconds
        self.exits = exits
        self.histograms = histograms
        self.signposts = signposts
    }
}

/// One ~3-hour slice of a metric report's interval entries (not the full-day one): its length and
/// its resource metrics (scalars, named as in the full entry).
package struct IntervalSlice: Sendable, Equatable {
    package var durationSeconds: Double
    package var scalars: [ScalarMetric]

    package init(durationSeconds: Double, scalars: [ScalarMetric]) {
        self.durationSeconds = durationSeconds
        self.scalars = scalars
    }
}
