/// Turns the tokens of one MetricKit document into model values.
///
/// Lenient by design: unknown keys are skipped, a value of the wrong JSON type is treated as absent,
/// and an unparseable measurement is kept as raw text and counted in ``unparsed``.
struct DocumentDecoder {
    let tape: JSONTape
    let limits: DecodeLimits
    /// Measurement strings that could not be parsed so far.
    var unparsed = 0

    init(tape: JSONTape, limits: DecodeLimits) {
        self.tape = tape
        self.limits = limits
    }

    // MARK: - Values

    /// A measurement from a string token (or a bare number, read as a count); `nil` for other kinds.
    mutating func measurement(_ t: Int) -> Measurement? {
        measurementAndFactor(t)?.measurement
    }

    /// Like ``measurement(_:)``, also returning the factor applied to the written number.
    mutating func measurementAndFactor(_ t: Int) -> (measurement: Measurement, factor: Double)? {
        switch tape.kind(t) {
        case .string:
            let raw = tape.string(t) ?? ""
            let parsed: MeasurementParser.Parsed?
            if tape.isEscaped(t) {
                var copy = raw
                parsed = copy.withUTF8 { MeasurementParser.parse(UnsafeRawBufferPointer($0)) }
            } else {
                parsed = MeasurementParser.parse(tape.rawStringBytes(t))
            }
            if parsed == nil { unparsed += 1 }
            return (Measurement(value: parsed?.value, unit: parsed?.unit, raw: raw), parsed?.factor ?? 1)
        case .number:
            let raw = String(decoding: tape.bytes[tape.byteRange(t)], as: UTF8.self)
            return (Measurement(value: tape.double(t), unit: .count, raw: raw), 1)
        default:
            return nil
        }
    }

    /// A measurement value without keeping the raw text (histogram bucket bounds).
    mutating func measurementValue(_ t: Int) -> (value: Double, unit: MeasurementUnit)? {
        switch tape.kind(t) {
        case .string:
            let parsed: MeasurementParser.Parsed?
            if tape.isEscaped(t) {
                parsed = tape.unescapedBytes(t).withUnsafeBytes { MeasurementParser.parse($0) }
            } else {
                parsed = MeasurementParser.parse(tape.rawStringBytes(t))
            }
            guard let parsed else {
                unparsed += 1
                return nil
            }
            return (parsed.value, parsed.unit)
        case .number:
            return tape.double(t).map { ($0, .count) }
        default:
            return nil
        }
    }

    /// A timestamp from a string token; `nil` for other kinds.
    func timestamp(_ t: Int) -> Timestamp? {
        guard let raw = tape.string(t) else { return nil }
        let epoch: Int64?
        if tape.isEscaped(t) {
            var copy = raw
            epoch = copy.withUTF8 { TimestampParser.epochSeconds(UnsafeRawBufferPointer($0)) }
        } else {
            epoch = TimestampParser.epochSeconds(tape.rawStringBytes(t))
        }
        return Timestamp(epochSeconds: epoch, raw: raw)
    }

    /// Applies one `metaData` / `diagnosticMetaData` member to `meta`; `false` when the key is not a device field.
    func applyMetaField(key k: Int, value v: Int, to meta: inout DeviceMeta) -> Bool {
        if tape.keyEquals(k, "appBuildVersion") {
            meta.appBuildVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "osVersion") {
            meta.osVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "deviceType") {
            meta.deviceType = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "regionFormat") {
            meta.regionFormat = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "platformArchitecture") {
            meta.platformArchitecture = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "bundleIdentifier") {
            meta.bundleIdentifier = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "appVersion") {
            meta.appVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "isTestFlightApp") {
            meta.isTestFlightApp = tape.bool(v)
        } else if tape.keyEquals(k, "lowPowerModeEnabled") {
            meta.lowPowerModeEnabled = tape.bool(v)
        } else if tape.keyEquals(k, "pid") {
            meta.pid = tape.int64(v)
        } else {
            return false
        }
        return true
    }

    // MARK: - Metric payload

    /// Decodes an `MXMetricPayload` object.
    mutating func metricPayload(_ root: Int) -> MetricPayload {
        var payload = MetricPayload(begin: nil, end: nil, meta: DeviceMeta())
        var topAppVersion: String?
        var sawTopAppVersion = false
        var sections: [(token: Int, name: String)] = []
        tape.forEachMember(root) { k, v in
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
                exits(v, into: &payload.exits)
            } else if tape.keyEquals(k, "signpostMetrics") {
                tape.forEachElement(v) { e in
                    if let signpost = signpost(e) { payload.signposts.append(signpost) }
                }
            } else if tape.kind(v) == .object {
                sections.append((v, tape.string(k) ?? ""))
            }
        }
        if sawTopAppVersion { payload.meta.appVersion = topAppVersion }
        for section in sections {
            genericSection(section.token, name: section.name, into: &payload)
        }
        return payload
    }

    /// `applicationExitMetrics`: `foregroundExitData` / `backgroundExitData` counters.
    private func exits(_ t: Int, into exits: inout [ExitCount]) {
        tape.forEachMember(t) { k, v in
            let state: AppState
            if tape.keyEquals(k, "foregroundExitData") {
                state = .foreground
            } else if tape.keyEquals(k, "backgroundExitData") {
                state = .background
            } else {
                return
            }
            exits.reserveCapacity(exits.count + Int(tape.tokens[v].count))
            tape.forEachMember(v) { rk, rv in
                guard let count = tape.int64(rv) else { return }
                exits.append(ExitCount(state: state, reason: exitReason(rk), count: count))
            }
        }
    }

    /// `cumulativeMemoryPressureExitCount` → `MemoryPressure`; other keys pass through unchanged.
    private func exitReason(_ k: Int) -> String {
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
    private mutating func signpost(_ t: Int) -> SignpostMetric? {
        guard tape.kind(t) == .object else { return nil }
        var signpost = SignpostMetric(category: "", name: "", totalCount: 0)
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "signpostName") {
                signpost.name = tape.string(v) ?? ""
            } else if tape.keyEquals(k, "signpostCategory") {
                signpost.category = tape.string(v) ?? ""
            } else if tape.keyEquals(k, "totalSignpostCount") {
                signpost.totalCount = tape.int64(v) ?? 0
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
        return signpost
    }

    /// A measurement string, or the `averageValue` of an average object.
    private mutating func averageOrMeasurement(_ t: Int) -> Measurement? {
        if tape.kind(t) == .object, let average = tape.member(t, "averageValue") { return measurement(average) }
        return measurement(t)
    }

    /// A MetricKit histogram object (`histogramNumBuckets`, `histogramValue`); buckets sorted by start.
    mutating func histogram(_ t: Int) -> Histogram? {
        guard tape.kind(t) == .object, let values = tape.member(t, "histogramValue") else { return nil }
        var histogram = Histogram(unit: nil, buckets: [])
        histogram.buckets.reserveCapacity(Int(tape.tokens[values].count))
        var sorted = true
        var previous = -Double.infinity
        tape.forEachMember(values) { _, b in
            guard tape.kind(b) == .object else { return }
            var bucket = HistogramBucket(start: nil, end: nil, count: 0)
            tape.forEachMember(b) { bk, bv in
                if tape.keyEquals(bk, "bucketStart") {
                    if let m = measurementValue(bv) {
                        bucket.start = m.value
                        if histogram.unit == nil { histogram.unit = m.unit }
                    }
                } else if tape.keyEquals(bk, "bucketEnd") {
                    if let m = measurementValue(bv) {
                        bucket.end = m.value
                        if histogram.unit == nil { histogram.unit = m.unit }
                    }
                } else if tape.keyEquals(bk, "bucketCount") {
                    bucket.count = tape.int64(bv) ?? 0
                }
            }
            let start = bucket.start ?? .infinity
            if start < previous { sorted = false }
            previous = start
            histogram.buckets.append(bucket)
        }
        if !sorted {
            histogram.buckets.sort { a, b in
                let sa = a.start ?? .infinity
                let sb = b.start ?? .infinity
                if sa != sb { return sa < sb }
                return (a.end ?? .infinity) < (b.end ?? .infinity)
            }
        }
        return histogram
    }

    /// Any other section: strings become scalars, `averageValue` objects averages, `histogramValue`
    /// objects histograms, numbers count scalars, other objects are walked (iteratively) as sub-sections.
    private mutating func genericSection(_ section: Int, name: String, into payload: inout MetricPayload) {
        var work: [(token: Int, prefix: String)] = [(section, name)]
        while let (token, prefix) = work.popLast() {
            tape.forEachMember(token) { k, v in
                switch tape.kind(v) {
                case .string, .number:
                    let name = prefix + "." + (tape.string(k) ?? "")
                    if let m = measurement(v) { payload.scalars.append(ScalarMetric(name: name, measurement: m)) }
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
                        if let h = histogram(v) { payload.histograms.append(NamedHistogram(name: name, histogram: h)) }
                    } else if let average {
                        guard let (m, factor) = measurementAndFactor(average) else { return }
                        let sampleCount = samples.flatMap { tape.int64($0) }
                        var sd = deviation.flatMap { tape.double($0) }.map { $0 * factor }
                        if let value = sd, value < 0 { sd = nil }  // -1 means "no data"
                        payload.scalars.append(
                            ScalarMetric(name: name, measurement: m, standardDeviation: sd, sampleCount: sampleCount))
                    } else {
                        work.append((v, name))
                    }
                default:
                    return
                }
            }
        }
    }
}
