/// iOS 27 `MetricReport`: the full-day interval entry, slices, terminations, histograms and
/// signposts, mapped onto the legacy names.
extension DocumentDecoder {
    /// Decodes a `MetricReport`. The full-day interval entry (the longest) gives the payload's
    /// metrics; the other interval entries become ``MetricPayload/slices``; `stateEntries` and the
    /// full entry's states become ``MetricPayload/stateEntries``.
    mutating func metricReport(_ root: Int) throws(DecodeError) -> MetricPayload {
        var payload = MetricPayload(begin: nil, end: nil, meta: DeviceMeta())
        payload.format = .v2
        var intervals: Int?
        var states: Int?
        try tape.forEachMember(root) { (k, v) throws(DecodeError) in
            if tape.keyEquals(k, "timeRange") {
                (payload.begin, payload.end) = timeRange(v)
            } else if tape.keyEquals(k, "environment") {
                _ = try environment(v, into: &payload.meta)
            } else if tape.keyEquals(k, "intervalEntries") {
                intervals = v
            } else if tape.keyEquals(k, "stateEntries") {
                states = v
            }
        }
        try requireBegin(payload.begin, root)
        var entries: [(duration: Double, token: Int)] = []
        if let intervals, tape.kind(intervals) == .array {
            tape.forEachElement(intervals) { e in
                guard tape.kind(e) == .object else { return }
                let duration = tape.member(e, "duration").flatMap { measurement($0)?.value } ?? 0
                entries.append((duration, e))
            }
        }
        var byState: [ReportedState: StateEntry] = [:]
        var order: [ReportedState] = []
        func entry(_ state: ReportedState) -> StateEntry {
            if let existing = byState[state] { return existing }
            order.append(state)
            return StateEntry(state: state)
        }
        // The full-day entry: the longest one (the first of equals).
        let full = entries.indices.max { a, b in entries[a].duration < entries[b].duration }
        for (index, item) in entries.enumerated() {
            var results = MetricResults()
            if let values = tape.member(item.token, "values") {
                try metricResults(values, into: &results)
            }
            if index == full {
                payload.exits = results.exits
                payload.histograms = results.histograms
                payload.signposts = results.signposts
                payload.scalars = results.scalars
                if let list = tape.member(item.token, "states") {
                    for (state, seconds) in try reportedStates(list) {
                        var value = entry(state)
                        value.activeSeconds = seconds ?? value.activeSeconds
                        byState[state] = value
                    }
                }
            } else {
                payload.slices.append(IntervalSlice(durationSeconds: item.duration / 1_000, scalars: results.scalars))
            }
        }
        if let states {
            var exitEntries = 0
            for item in try stateEntryTokens(states) {
                guard let stateToken = tape.member(item, "state"), let (state, seconds) = reportedState(stateToken)
                else { continue }
                if byState[state] == nil, order.count >= limits.maxStatesPerDocument {
                    throw limitError("more than \(limits.maxStatesPerDocument) app states", at: item)
                }
                var results = MetricResults()
                if let values = tape.member(item, "values") { try metricResults(values, into: &results) }
                exitEntries += results.exits.count
                guard exitEntries <= limits.maxExitEntriesPerDocument * 8 else {
                    throw limitError(
                        "more than \(limits.maxExitEntriesPerDocument * 8) exit counters in app states", at: item)
                }
                var value = entry(state)
                value.activeSeconds = value.activeSeconds ?? seconds
                value.exits += results.exits
                value.histograms += results.histograms
                value.signposts += results.signposts
                byState[state] = value
            }
        }
        guard order.count <= limits.maxStatesPerDocument else {
            throw limitError("more than \(limits.maxStatesPerDocument) app states", at: root)
        }
        payload.stateEntries = order.compactMap { byState[$0] }
        // A zero-length report carries only the disk-space snapshot: not a day of usage.
        let zeroLength = payload.begin?.epochSeconds != nil && payload.begin?.epochSeconds == payload.end?.epochSeconds
        payload.isDeviceDay = !(zeroLength || (full.map { entries[$0].duration } ?? 0) <= 0)
        return payload
    }

    /// The metrics of one `values` array.
    struct MetricResults {
        var exits: [ExitCount] = []
        var histograms: [NamedHistogram] = []
        var signposts: [SignpostMetric] = []
        var scalars: [ScalarMetric] = []
    }

    /// Reads a `values` array of single-key result objects (`{"cpuTimeMetric": {…}}`). Unknown
    /// keys are skipped when their shape is unknown too (the raw document keeps them).
    mutating func metricResults(_ values: Int, into results: inout MetricResults) throws(DecodeError) {
        guard tape.kind(values) == .array else { return }
        try tape.forEachElement(values) { (element) throws(DecodeError) in
            guard tape.kind(element) == .object else { return }
            try tape.forEachMember(element) { (k, v) throws(DecodeError) in
                guard tape.kind(v) == .object, nameFits(k) else { return }
                // The special names compared as bytes (length first), not as Strings.
                if tape.keyEquals(k, "foregroundTerminationMetric") {
                    return try terminations(v, state: .foreground, into: &results)
                } else if tape.keyEquals(k, "backgroundTerminationMetric") {
                    return try terminations(v, state: .background, into: &results)
                }
                let key = tape.string(k) ?? ""
                if tape.keyEquals(k, "signpostIntervalMetric") {
                    guard results.signposts.count < limits.maxSignpostsPerDocument else {
                        throw limitError("more than \(limits.maxSignpostsPerDocument) signpost entries", at: k)
                    }
                    try checkMetricBudget(results, at: k)  // state entries repeat them: count body-wide
                    if let signpost = reportSignpost(v) {
                        results.signposts.append(signpost)
                        metricsRemaining -= 1
                    }
                } else if tape.keyEquals(k, "locationActivityTimeMetric") {
                    try tape.forEachMember(v) { (lk, lv) throws(DecodeError) in
                        guard nameFits(lk) else { return }
                        let member = tape.string(lk) ?? ""
                        let name = "locationActivityMetrics." + (Self.locationNames[member] ?? member)
                        if let m = measurement(lv) {
                            try addScalar(ScalarMetric(name: name, measurement: m), &results, at: lk)
                        }
                    }
                } else if tape.keyEquals(k, "hitchTimeMetric") {
                    try tape.forEachMember(v) { (hk, hv) throws(DecodeError) in
                        guard nameFits(hk) else { return }
                        if let m = measurement(hv) {
                            try addScalar(
                                ScalarMetric(name: "animationMetrics." + (tape.string(hk) ?? ""), measurement: m),
                                &results,
                                at: hk)
                        }
                    }
                } else if let histogramToken = tape.member(v, "histogram") {
                    try checkMetricBudget(results, at: k)
                    if let histogram = reportHistogram(histogramToken) {
                        results.histograms.append(
                            NamedHistogram(name: Self.histogramNames[key] ?? key, histogram: histogram))
                        metricsRemaining -= 1
                    }
                } else if let valueToken = tape.member(v, "value") {
                    let name = Self.scalarNames[key] ?? key
                    if tape.kind(valueToken) == .object, let average = tape.member(valueToken, "average") {
                        if let scalar = averageScalar(name: name, average: average, in: valueToken) {
                            try addScalar(scalar, &results, at: k)
                        }
                    } else if tape.keyEquals(k, "cpuInstructionsCountMetric"), tape.kind(valueToken) == .number {
                        // A plain integer of instructions (legacy: kiloinstructions strings).
                        guard let count = tape.double(valueToken), ValueBounds.isPlausible(count, unit: .instructions)
                        else {
                            dropped += 1
                            return
                        }
                        let raw = String(decoding: tape.bytes[tape.byteRange(valueToken)], as: UTF8.self)
                        try addScalar(
                            ScalarMetric(
                                name: name, measurement: Measurement(value: count, unit: .instructions, raw: raw)),
                            &results, at: k)
                    } else if let m = measurement(valueToken) {
                        try addScalar(ScalarMetric(name: name, measurement: m), &results, at: k)
                    }
                } else {
                    // An unknown shape (the disk-space snapshot, a metric Apple adds next year): each
                    // member that is a measurement or a number becomes `<key>.<member>`.
                    try tape.forEachMember(v) { (mk, mv) throws(DecodeError) in
                        guard tape.kind(mv) == .number || tape.kind(mv) == .object,
                            nameFits(mk, extra: key.utf8.count + 1),
                            let m = measurement(mv)
                        else { return }
                        try addScalar(
                            ScalarMetric(name: key + "." + (tape.string(mk) ?? ""), measurement: m), &results, at: mk)
                    }
                }
            }
        }
    }

    func checkMetricBudget(_ results: MetricResults, at k: Int) throws(DecodeError) {
        guard results.scalars.count + results.histograms.count < limits.maxMetricsPerDocument else {
            throw limitError("more than \(limits.maxMetricsPerDocument) metrics", at: k)
        }
        guard metricsRemaining > 0 else {
            throw limitError("the body's documents hold more than \(limits.maxMetricsPerBody) metrics", at: k)
        }
    }

    mutating func addScalar(_ scalar: ScalarMetric, _ results: inout MetricResults, at k: Int)
        throws(DecodeError)
    {
        try checkMetricBudget(results, at: k)
        results.scalars.append(scalar)
        metricsRemaining -= 1
    }

    /// `{"average": M, "count": n, "standardDeviation": x}` as a scalar with its sample count.
    mutating func averageScalar(name: String, average: Int, in statistics: Int) -> ScalarMetric? {
        guard let (m, factor) = measurementAndFactor(average) else { return nil }
        var samples = tape.member(statistics, "count").flatMap { tape.int64($0) }
        if let count = samples, !ValueBounds.isPlausibleEventCount(count) {
            dropped += 1
            samples = nil
        }
        var deviation = tape.member(statistics, "standardDeviation").flatMap { tape.double($0) }.map { $0 * factor }
        if let value = deviation, value < 0 || !ValueBounds.isPlausible(value, unit: m.unit) {
            if value >= 0 { dropped += 1 }
            deviation = nil
        }
        return ScalarMetric(name: name, measurement: m, standardDeviation: deviation, sampleCount: samples)
    }

    /// `foregroundTerminationMetric` / `backgroundTerminationMetric` counters (zeros included).
    mutating func terminations(_ t: Int, state: AppState, into results: inout MetricResults) throws(DecodeError) {
        try tape.forEachMember(t) { (k, v) throws(DecodeError) in
            guard results.exits.count < limits.maxExitEntriesPerDocument else {
                throw limitError("more than \(limits.maxExitEntriesPerDocument) exit counters", at: k)
            }
            guard nameFits(k) else { return }
            guard let count = tape.int64(v), ValueBounds.isPlausibleExitCount(count) else {
                if tape.kind(v) == .number { dropped += 1 }
                return
            }
            let name = terminationName(k)
            let reason = Self.terminationReasons[name] ?? (name.prefix(1).uppercased() + name.dropFirst())
            guard !reason.isEmpty else { return }
            results.exits.append(ExitCount(state: state, reason: reason, count: count))
        }
    }

    /// A termination counter's key without its `TerminationCount` suffix. An ASCII key without
    /// escapes (every one Apple sends) is cut as bytes, so the name is made once and short (no
    /// String compare or copy; ASCII's characters are its bytes); any other as Characters.
    private func terminationName(_ k: Int) -> String {
        let suffix: StaticString = "TerminationCount"
        let count = suffix.utf8CodeUnitCount
        let raw = tape.rawStringBytes(k)
        guard !tape.isEscaped(k), raw.allSatisfy({ $0 < 0x80 }) else {
            var name = tape.string(k) ?? ""
            if name.hasSuffix("\(suffix)") { name.removeLast(count) }
            return name
        }
        let suffixBytes = UnsafeBufferPointer(start: suffix.utf8Start, count: count)
        guard raw.count >= count, raw.suffix(count).elementsEqual(suffixBytes) else {
            return String(decoding: raw, as: UTF8.self)
        }
        return String(decoding: raw.prefix(raw.count - count), as: UTF8.self)
    }

    /// A 2.0.0 histogram: `{"buckets": [{"count", "lowerBound": M, "upperBound": M}]}`; buckets
    /// sorted by start, in the canonical unit of their bounds.
    mutating func reportHistogram(_ t: Int) -> Histogram? {
        guard tape.kind(t) == .object else { return nil }
        let list = tape.member(t, "buckets") ?? t
        guard tape.kind(list) == .array else { return Histogram(unit: nil, buckets: []) }
        var histogram = Histogram(unit: nil, buckets: [])
        tape.forEachElement(list) { b in
            guard tape.kind(b) == .object else { return }
            guard histogram.buckets.count < limits.maxBucketsPerHistogram else {
                dropped += 1
                return
            }
            var bucket = HistogramBucket(start: nil, end: nil, count: 0)
            var plausible = true
            tape.forEachMember(b) { bk, bv in
                if tape.keyEquals(bk, "lowerBound") {
                    if !bucketBound(bv, into: &bucket.start, unit: &histogram.unit) { plausible = false }
                } else if tape.keyEquals(bk, "upperBound") {
                    if !bucketBound(bv, into: &bucket.end, unit: &histogram.unit) { plausible = false }
                } else if tape.keyEquals(bk, "count") {
                    if let count = eventCount(bv) { bucket.count = count } else { plausible = false }
                }
            }
            if plausible { histogram.buckets.append(bucket) }
        }
        histogram.buckets.sort(by: Self.bucketOrder)
        return histogram
    }

    /// `signpostIntervalMetric`: name, category, total and the duration histogram.
    mutating func reportSignpost(_ t: Int) -> SignpostMetric? {
        var signpost = SignpostMetric(category: "", name: "", totalCount: 0)
        var plausible = true
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "signpostName") || tape.keyEquals(k, "signpostCategory") {
                guard tape.kind(v) == .string, nameFits(v) else {
                    plausible = false
                    return
                }
                if tape.keyEquals(k, "signpostName") {
                    signpost.name = tape.string(v) ?? ""
                } else {
                    signpost.category = tape.string(v) ?? ""
                }
            } else if tape.keyEquals(k, "totalCount") {
                if let total = eventCount(v) { signpost.totalCount = total } else { plausible = false }
            } else if tape.keyEquals(k, "signpostDuration") {
                signpost.durations = reportHistogram(tape.member(v, "histogram") ?? v)
            } else if tape.keyEquals(k, "cpuTime") {
                signpost.cumulativeCPUTime = measurement(v)
            } else if tape.keyEquals(k, "averageMemory") {
                signpost.averageMemory = tape.member(v, "average").flatMap { measurement($0) } ?? measurement(v)
            } else if tape.keyEquals(k, "logicalWrites") {
                signpost.cumulativeLogicalWrites = measurement(v)
            } else if tape.keyEquals(k, "hitchTimeRatio") {
                signpost.cumulativeHitchTimeRatio = measurement(v)
            }
        }
        return plausible && !signpost.name.isEmpty ? signpost : nil
    }
}
