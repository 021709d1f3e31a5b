/// Legacy `MXMetricPayload` documents (`jsonRepresentation()`): exits, signposts, histograms and
/// the generic sections of scalar metrics.
extension DocumentDecoder {
    /// Decodes an `MXMetricPayload` object.
    mutating func metricPayload(_ root: Int) throws(DecodeError) -> MetricPayload {
        var payload = MetricPayload(begin: nil, end: nil, meta: DeviceMeta())
        var topAppVersion: String?
        var sawTopAppVersion = false
        var sections: [(token: Int, name: String)] = []
        var exitEntries = 0
        var failure: DecodeError?
        tape.forEachMember(root) { k, v in
            guard failure == nil else { return }
            if tape.keyEquals(k, "appVersion") {
                sawTopAppVersion = true
                topAppVersion = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "timeStampBegin") {
                payload.begin = timestamp(v)
            } else if tape.keyEquals(k, "timeStampEnd") {
                payload.end = timestamp(v)
            } else if tape.keyEquals(k, "metaData") {
                tape.forEachMember(v) { mk, mv in _ = applyMetaField(key: mk, value: mv, to: &payload.meta) }
            } else if tape.keyEquals(k, "applicationExitMetrics") {
                do throws(DecodeError) {
                    try exits(v, into: &payload.exits, entries: &exitEntries)
                } catch {
                    failure = error
                }
            } else if tape.keyEquals(k, "signpostMetrics") {
                tape.forEachElement(v) { e in
                    guard failure == nil else { return }
                    guard payload.signposts.count < limits.maxSignpostsPerDocument else {
                        failure = limitError(
                            "more than \(limits.maxSignpostsPerDocument) signpost entries", at: e)
                        return
                    }
                    if let signpost = signpost(e) { payload.signposts.append(signpost) }
                }
            } else if tape.kind(v) == .object {
                if nameFits(k) { sections.append((v, tape.string(k) ?? "")) }
            }
        }
        if let failure { throw failure }
        if sawTopAppVersion { payload.meta.appVersion = topAppVersion }
        for section in sections {
            try genericSection(section.token, name: section.name, into: &payload)
        }
        return payload
    }

    /// `applicationExitMetrics`: `foregroundExitData` / `backgroundExitData` counters. `entries`
    /// counts the members read across repeated keys, against ``DecodeLimits/maxExitEntriesPerDocument``.
    mutating func exits(_ t: Int, into exits: inout [ExitCount], entries: inout Int) throws(DecodeError) {
        var failure: DecodeError?
        tape.forEachMember(t) { k, v in
            guard failure == nil else { return }
            let state: AppState
            if tape.keyEquals(k, "foregroundExitData") {
                state = .foreground
            } else if tape.keyEquals(k, "backgroundExitData") {
                state = .background
            } else {
                return
            }
            tape.forEachMember(v) { rk, rv in
                guard failure == nil else { return }
                entries += 1
                guard entries <= limits.maxExitEntriesPerDocument else {
                    failure = limitError("more than \(limits.maxExitEntriesPerDocument) exit counters", at: rk)
                    return
                }
                guard let count = tape.int64(rv) else {
                    if tape.kind(rv) == .number { dropped += 1 }  // 1e20, 2.5: not a count
                    return
                }
                guard ValueBounds.isPlausibleExitCount(count), nameFits(rk) else {
                    if ValueBounds.isPlausibleExitCount(count) == false { dropped += 1 }
                    return
                }
                exits.append(ExitCount(state: state, reason: exitReason(rk), count: count))
            }
        }
        if let failure { throw failure }
    }

    /// `cumulativeMemoryPressureExitCount` → `MemoryPressure`; other keys pass through unchanged.
    func exitReason(_ k: Int) -> String {
        let prefix: StaticString = "cumulative"
        let suffix: StaticString = "ExitCount"
        if !tape.isEscaped(k) {
            let raw = tape.rawStringBytes(k)
            let p = prefix.utf8CodeUnitCount
            let s = suffix.utf8CodeUnitCount
            if raw.count > p + s && raw.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: p))
                && raw[(raw.count - s)...].elementsEqual(UnsafeBufferPointer(start: suffix.utf8Start, count: s))
            {
                return String(decoding: raw[p..<(raw.count - s)], as: UTF8.self)
            }
            return String(decoding: raw, as: UTF8.self)
        }
        let key = tape.string(k) ?? ""
        if key.count > 19 && key.hasPrefix("cumulative") && key.hasSuffix("ExitCount") {
            return String(key.dropFirst(10).dropLast(9))
        }
        return key
    }

    /// One `signpostMetrics` element.
    mutating func signpost(_ t: Int) -> SignpostMetric? {
        guard tape.kind(t) == .object else { return nil }
        var signpost = SignpostMetric(category: "", name: "", totalCount: 0)
        var plausible = true
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "signpostName") {
                if tape.kind(v) == .string && !nameFits(v) { plausible = false }
                signpost.name = plausible ? tape.string(v) ?? "" : ""
            } else if tape.keyEquals(k, "signpostCategory") {
                if tape.kind(v) == .string && !nameFits(v) { plausible = false }
                signpost.category = plausible ? tape.string(v) ?? "" : ""
            } else if tape.keyEquals(k, "totalSignpostCount") {
                if let total = eventCount(v) { signpost.totalCount = total } else { plausible = false }
            } else if tape.keyEquals(k, "signpostIntervalData") {
                tape.forEachMember(v) { ik, iv in
                    if tape.keyEquals(ik, "histogrammedSignpostDurations") {
                        signpost.durations = histogram(iv)
                    } else if tape.keyEquals(ik, "signpostCumulativeCPUTime") {
                        signpost.cumulativeCPUTime = measurement(iv)
                    } else if tape.keyEquals(ik, "signpostAverageMemory") {
                        signpost.averageMemory = averageOrMeasurement(iv)
                    } else if tape.keyEquals(ik, "signpostCumulativeLogicalWrites") {
                        signpost.cumulativeLogicalWrites = measurement(iv)
                    } else if tape.keyEquals(ik, "signpostCumulativeHitchTimeRatio") {
                        signpost.cumulativeHitchTimeRatio = measurement(iv)
                    }
                }
            }
        }
        return plausible ? signpost : nil
    }

    /// A measurement string, or the `averageValue` of an average object.
    mutating func averageOrMeasurement(_ t: Int) -> Measurement? {
        if tape.kind(t) == .object, let average = tape.member(t, "averageValue") { return measurement(average) }
        return measurement(t)
    }

    /// A MetricKit histogram object (`histogramNumBuckets`, `histogramValue`); buckets sorted by start.
    mutating func histogram(_ t: Int) -> Histogram? {
        guard tape.kind(t) == .object, let values = tape.member(t, "histogramValue") else { return nil }
        var histogram = Histogram(unit: nil, buckets: [])
        let maxBuckets = limits.maxBucketsPerHistogram
        histogram.buckets.reserveCapacity(min(maxBuckets, Int(tape.tokens[values].count)))
        var sorted = true
        var previous = -Double.infinity
        tape.forEachMember(values) { _, b in
            guard tape.kind(b) == .object else { return }
            guard histogram.buckets.count < maxBuckets else {
                dropped += 1
                return
            }
            var bucket = HistogramBucket(start: nil, end: nil, count: 0)
            var plausible = true
            tape.forEachMember(b) { bk, bv in
                if tape.keyEquals(bk, "bucketStart") {
                    if !bucketBound(bv, into: &bucket.start, unit: &histogram.unit) { plausible = false }
                } else if tape.keyEquals(bk, "bucketEnd") {
                    if !bucketBound(bv, into: &bucket.end, unit: &histogram.unit) { plausible = false }
                } else if tape.keyEquals(bk, "bucketCount") {
                    if let count = eventCount(bv) { bucket.count = count } else { plausible = false }
                }
            }
            // One implausible field drops the whole bucket (counted once per field above).
            guard plausible else { return }
            let start = bucket.start ?? .infinity
            if start < previous { sorted = false }
            previous = start
            histogram.buckets.append(bucket)
        }
        if !sorted { histogram.buckets.sort(by: Self.bucketOrder) }
        return histogram
    }

    /// An event count (bucket count, signpost total): 0 when absent or not a number; nil, counted
    /// as dropped, when implausible (negative, past ``ValueBounds``, not an integer).
    mutating func eventCount(_ t: Int) -> Int64? {
        let count = tape.int64(t) ?? (tape.kind(t) == .number ? -1 : 0)
        guard ValueBounds.isPlausibleEventCount(count) else {
            dropped += 1
            return nil
        }
        return count
    }

    /// A histogram bucket bound into `value` (and the histogram's unit, from its first bound);
    /// false when the bound was dropped as implausible (an unparsed one is only left out).
    mutating func bucketBound(_ t: Int, into value: inout Double?, unit: inout MeasurementUnit?) -> Bool {
        let before = dropped
        guard let m = measurementValue(t) else { return dropped == before }
        value = m.value
        if unit == nil { unit = m.unit }
        return true
    }

    /// Buckets by start, then end; a missing bound sorts last.
    static func bucketOrder(_ a: HistogramBucket, _ b: HistogramBucket) -> Bool {
        let (sa, sb) = (a.start ?? .infinity, b.start ?? .infinity)
        return sa != sb ? sa < sb : (a.end ?? .infinity) < (b.end ?? .infinity)
    }

    /// Any other section: strings become scalars, `averageValue` objects averages, `histogramValue`
    /// objects histograms, numbers count scalars, other objects are walked (iteratively) as sub-sections.
    ///
    /// A name longer than ``DecodeLimits/maxNameBytes`` is dropped with its whole subtree before any
    /// string is built, so the work per leaf is bounded whatever the keys' lengths.
    mutating func genericSection(
        _ section: Int, name: String, into payload: inout MetricPayload
    ) throws(DecodeError) {
        var work: [(token: Int, prefix: String)] = [(section, name)]
        var failure: DecodeError?
        while failure == nil, let (token, prefix) = work.popLast() {
            tape.forEachMember(token) { k, v in
                guard failure == nil else { return }
                switch tape.kind(v) {
                case .string, .number, .object:
                    guard payload.scalars.count + payload.histograms.count < limits.maxMetricsPerDocument else {
                        failure = limitError("more than \(limits.maxMetricsPerDocument) metrics", at: k)
                        return
                    }
                    guard metricsRemaining > 0 else {
                        failure = limitError(
                            "the body's documents hold more than \(limits.maxMetricsPerBody) metrics", at: k)
                        return
                    }
                    guard nameFits(k, extra: prefix.utf8.count + 1) else { return }
                default:
                    return
                }
                switch tape.kind(v) {
                case .string, .number:
                    let name = prefix + "." + (tape.string(k) ?? "")
                    if let m = measurement(v) {
                        payload.scalars.append(ScalarMetric(name: name, measurement: m))
                        metricsRemaining -= 1
                    }
                case .object:
                    var isHistogram = false
                    var average: Int?
                    var deviation: Int?
                    var samples: Int?
                    tape.forEachMember(v) { ok, ov in
                        if tape.keyEquals(ok, "histogramValue") {
                            isHistogram = true
                        } else if tape.keyEquals(ok, "averageValue") {
                            average = ov
                        } else if tape.keyEquals(ok, "standardDeviation") {
                            deviation = ov
                        } else if tape.keyEquals(ok, "sampleCount") {
                            samples = ov
                        }
                    }
                    let name = prefix + "." + (tape.string(k) ?? "")
                    if isHistogram {
                        if let h = histogram(v) {
                            payload.histograms.append(NamedHistogram(name: name, histogram: h))
                            metricsRemaining -= 1
                        }
                    } else if let average {
                        guard let (m, factor) = measurementAndFactor(average) else { return }
                        var sampleCount = samples.flatMap { tape.int64($0) }
                        if let count = sampleCount, !ValueBounds.isPlausibleEventCount(count) {
                            dropped += 1
                            sampleCount = nil
                        }
                        var sd = deviation.flatMap { tape.double($0) }.map { $0 * factor }
                        if let value = sd, value < 0 { sd = nil }  // -1 means "no data"
                        if let value = sd, !ValueBounds.isPlausible(value, unit: m.unit) {
                            dropped += 1
                            sd = nil
                        }
                        payload.scalars.append(
                            ScalarMetric(name: name, measurement: m, standardDeviation: sd, sampleCount: sampleCount))
                        metricsRemaining -= 1
                    } else {
                        work.append((v, name))
                    }
                default:
                    return
                }
            }
        }
        if let failure { throw failure }
    }
}
