/// iOS 27 `MetricReport` / `DiagnosticReport` JSON (`"version": "2.0.0"`, METRICKIT-27.md),
/// decoded into the same model as the legacy payloads: metric names, exit reasons and diagnostic
/// fields are mapped onto the legacy ones, so every query reads both formats alike.
extension DocumentDecoder {
    /// Seconds from 1970-01-01 to 2001-01-01 (JSONEncoder's default date reference).
    static let referenceDateOffset: Double = 978_307_200

    /// The diagnostic report keys, one per report, and their kinds.
    static let reportDiagnosticKeys: [(key: StaticString, kind: DiagnosticKind)] = [
        ("crashDiagnostic", .crash),
        ("hangDiagnostic", .hang),
        ("cpuExceptionDiagnostic", .cpuException),
        ("diskWriteExceptionDiagnostic", .diskWriteException),
        ("appLaunchDiagnostic", .appLaunch),
        ("memoryExceptionDiagnostic", .memoryException),
    ]

    /// 2.0.0 termination counters (`<name>TerminationCount`) → legacy exit reasons.
    static let terminationReasons: [String: String] = [
        "normal": "NormalApp", "memoryLimit": "MemoryResourceLimit", "badAccess": "BadAccess",
        "abnormal": "Abnormal", "illegalInstruction": "IllegalInstruction", "watchdog": "AppWatchdog",
        "highCPU": "CPUResourceLimit", "systemPressure": "MemoryPressure", "fileLock": "SuspendedWithLockedFile",
        "taskTimeout": "BackgroundTaskAssertionTimeout",
    ]

    /// 2.0.0 metric keys whose value is one measurement or average (`{"value": …}`) → legacy names.
    static let scalarNames: [String: String] = [
        "totalForegroundTimeMetric": "applicationTimeMetrics.cumulativeForegroundTime",
        "totalBackgroundTimeMetric": "applicationTimeMetrics.cumulativeBackgroundTime",
        "totalBackgroundAudioTimeMetric": "applicationTimeMetrics.cumulativeBackgroundAudioTime",
        "totalBackgroundLocationTimeMetric": "applicationTimeMetrics.cumulativeBackgroundLocationTime",
        "cpuTimeMetric": "cpuMetrics.cumulativeCPUTime",
        "cpuInstructionsCountMetric": "cpuMetrics.cumulativeCPUInstructions",
        "gpuTimeMetric": "gpuMetrics.cumulativeGPUTime",
        "peakMemoryMetric": "memoryMetrics.peakMemoryUsage",
        "suspendedMemoryMetric": "memoryMetrics.averageSuspendedMemory",
        "logicalDiskWritesMetric": "diskIOMetrics.cumulativeLogicalWrites",
        "totalWiFiUploadMetric": "networkTransferMetrics.cumulativeWifiUpload",
        "totalWiFiDownloadMetric": "networkTransferMetrics.cumulativeWifiDownload",
        "totalCellularUploadMetric": "networkTransferMetrics.cumulativeCellularUpload",
        "totalCellularDownloadMetric": "networkTransferMetrics.cumulativeCellularDownload",
        "pixelLuminanceMetric": "displayMetrics.averagePixelLuminance",
    ]

    /// 2.0.0 histogram metrics (`{"histogram": …}`) → legacy names.
    static let histogramNames: [String: String] = [
        "hangTimeMetric": "applicationResponsivenessMetrics.histogrammedAppHangTime",
        "timeToFirstDrawMetric": "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey",
        "optimizedTimeToFirstDrawMetric": "applicationLaunchMetrics.histogrammedOptimizedTimeToFirstDrawKey",
        "applicationResumeTimeMetric": "applicationLaunchMetrics.histogrammedResumeTime",
        "extendedLaunchMetric": "applicationLaunchMetrics.histogrammedExtendedLaunch",
        "cellularConditionTimeMetric": "cellularConditionMetrics.cellConditionTime",
    ]

    /// `locationActivityTimeMetric` members → legacy `locationActivityMetrics` names.
    static let locationNames: [String: String] = [
        "bestAccuracyForNavigation": "cumulativeBestAccuracyForNavigationTime",
        "bestAccuracy": "cumulativeBestAccuracyTime", "tenMeters": "cumulativeNearestTenMetersAccuracyTime",
        "oneHundredMeter": "cumulativeHundredMetersAccuracyTime", "oneKilometer": "cumulativeKilometerAccuracyTime",
        "threeKilometers": "cumulativeThreeKilometersAccuracyTime", "reducedAccuracy": "cumulativeReducedAccuracyTime",
    ]

    /// Whether a document's top-level keys are those of a 2.0.0 report: `"version": "2.…"`, or
    /// `timeRange`/`environment` beside interval or state entries or a per-kind diagnostic key.
    static func reportShape(_ tape: JSONTape, _ t: Int) -> DocumentFamily? {
        var versionTwo = false
        var reportKeys = false
        var metricEntries = false
        var diagnosticKey = false
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "version") {
                versionTwo = tape.string(v)?.hasPrefix("2.") ?? false
            } else if tape.keyEquals(k, "timeRange") || tape.keyEquals(k, "environment") {
                reportKeys = true
            } else if tape.keyEquals(k, "intervalEntries") || tape.keyEquals(k, "stateEntries") {
                metricEntries = true
            } else if reportDiagnosticKeys.contains(where: { tape.keyEquals(k, $0.key) }) {
                diagnosticKey = true
            }
        }
        guard versionTwo || reportKeys else { return nil }
        if diagnosticKey { return .diagnostic }
        if metricEntries { return .metric }
        return nil
    }

    // MARK: - MetricReport

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
    private mutating func metricResults(_ values: Int, into results: inout MetricResults) throws(DecodeError) {
        guard tape.kind(values) == .array else { return }
        try tape.forEachElement(values) { (element) throws(DecodeError) in
            guard tape.kind(element) == .object else { return }
            try tape.forEachMember(element) { (k, v) throws(DecodeError) in
                guard tape.kind(v) == .object, nameFits(k) else { return }
                let key = tape.string(k) ?? ""
                if key == "foregroundTerminationMetric" || key == "backgroundTerminationMetric" {
                    try terminations(v, state: key.hasPrefix("foreground") ? .foreground : .background, into: &results)
                } else if key == "signpostIntervalMetric" {
                    guard results.signposts.count < limits.maxSignpostsPerDocument else {
                        throw limitError("more than \(limits.maxSignpostsPerDocument) signpost entries", at: k)
                    }
                    try checkMetricBudget(results, at: k)  // state entries repeat them: count body-wide
                    if let signpost = reportSignpost(v) {
                        results.signposts.append(signpost)
                        metricsRemaining -= 1
                    }
                } else if key == "locationActivityTimeMetric" {
                    try tape.forEachMember(v) { (lk, lv) throws(DecodeError) in
                        guard nameFits(lk) else { return }
                        let member = tape.string(lk) ?? ""
                        let name = "locationActivityMetrics." + (Self.locationNames[member] ?? member)
                        if let m = measurement(lv) {
                            try addScalar(ScalarMetric(name: name, measurement: m), &results, at: lk)
                        }
                    }
                } else if key == "hitchTimeMetric" {
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
                    } else if key == "cpuInstructionsCountMetric", tape.kind(valueToken) == .number {
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

    private func checkMetricBudget(_ results: MetricResults, at k: Int) throws(DecodeError) {
        guard results.scalars.count + results.histograms.count < limits.maxMetricsPerDocument else {
            throw limitError("more than \(limits.maxMetricsPerDocument) metrics", at: k)
        }
        guard metricsRemaining > 0 else {
            throw limitError("the body's documents hold more than \(limits.maxMetricsPerBody) metrics", at: k)
        }
    }

    private mutating func addScalar(_ scalar: ScalarMetric, _ results: inout MetricResults, at k: Int)
        throws(DecodeError)
    {
        try checkMetricBudget(results, at: k)
        results.scalars.append(scalar)
        metricsRemaining -= 1
    }

    /// `{"average": M, "count": n, "standardDeviation": x}` as a scalar with its sample count.
    private mutating func averageScalar(name: String, average: Int, in statistics: Int) -> ScalarMetric? {
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
    private mutating func terminations(_ t: Int, state: AppState, into results: inout MetricResults) throws(DecodeError)
    {
        try tape.forEachMember(t) { (k, v) throws(DecodeError) in
            guard results.exits.count < limits.maxExitEntriesPerDocument else {
                throw limitError("more than \(limits.maxExitEntriesPerDocument) exit counters", at: k)
            }
            guard nameFits(k) else { return }
            guard let count = tape.int64(v), ValueBounds.isPlausibleExitCount(count) else {
                if tape.kind(v) == .number { dropped += 1 }
                return
            }
            var name = tape.string(k) ?? ""
            if name.hasSuffix("TerminationCount") { name.removeLast("TerminationCount".count) }
            let reason = Self.terminationReasons[name] ?? (name.prefix(1).uppercased() + name.dropFirst())
            guard !reason.isEmpty else { return }
            results.exits.append(ExitCount(state: state, reason: reason, count: count))
        }
    }

    /// A 2.0.0 histogram: `{"buckets": [{"count", "lowerBound": M, "upperBound": M}]}`; buckets
    /// sorted by start, in the canonical unit of their bounds.
    private mutating func reportHistogram(_ t: Int) -> Histogram? {
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
    private mutating func reportSignpost(_ t: Int) -> SignpostMetric? {
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

    // MARK: - States

    /// The state entries of `stateEntries`: an array, or (`byStateReportingDomain`) an object of
    /// arrays keyed by domain.
    private func stateEntryTokens(_ t: Int) throws(DecodeError) -> [Int] {
        var tokens: [Int] = []
        func collect(_ list: Int) {
            guard tape.kind(list) == .array else { return }
            tape.forEachElement(list) { e in if tape.kind(e) == .object { tokens.append(e) } }
        }
        if tape.kind(t) == .object {
            tape.forEachMember(t) { _, v in collect(v) }
        } else {
            collect(t)
        }
        return tokens
    }

    /// The states of an interval entry or an environment: an array, or an object of arrays keyed by domain.
    mutating func reportedStates(_ t: Int) throws(DecodeError) -> [(ReportedState, Double?)] {
        var states: [(ReportedState, Double?)] = []
        var elements: [Int] = []
        if tape.kind(t) == .object {
            tape.forEachMember(t) { _, v in
                if tape.kind(v) == .array { tape.forEachElement(v) { elements.append($0) } }
            }
        } else if tape.kind(t) == .array {
            tape.forEachElement(t) { elements.append($0) }
        }
        guard elements.count <= limits.maxStatesPerDocument else {
            throw limitError("more than \(limits.maxStatesPerDocument) app states", at: t)
        }
        for element in elements {
            if let state = reportedState(element) { states.append(state) }
        }
        return states
    }

    /// One `ReportedState`: domain, label, stable metadata (canonical JSON) and active time (s).
    private mutating func reportedState(_ t: Int) -> (ReportedState, Double?)? {
        guard tape.kind(t) == .object else { return nil }
        var domain: String?
        var label: String?
        var seconds: Double?
        var metadata: [(key: String, json: String)] = []
        var metadataBytes = 0
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "domain") {
                if tape.kind(v) == .string, nameFits(v) { domain = tape.nonEmptyString(v) }
            } else if tape.keyEquals(k, "label") {
                if tape.kind(v) == .string, nameFits(v) { label = tape.nonEmptyString(v) }
            } else if tape.keyEquals(k, "duration") {
                seconds = measurement(v)?.value.map { $0 / 1_000 }
            } else if tape.keyEquals(k, "stableMetadata"), tape.kind(v) == .object {
                tape.forEachMember(v) { mk, mv in
                    // Each value is a single-key object: {"string": …}, {"integer": …}, …
                    guard nameFits(mk), tape.kind(mv) == .object else { return }
                    var json: String?
                    tape.forEachMember(mv) { _, value in
                        guard json == nil else { return }
                        let length = tape.rawLength(value)
                        guard length <= limits.maxNameBytes else {
                            dropped += 1
                            return
                        }
                        switch tape.kind(value) {
                        case .string: json = Self.jsonString(tape.string(value) ?? "")
                        case .number, .true, .false:
                            json = String(decoding: tape.bytes[tape.byteRange(value)], as: UTF8.self)
                        default: break
                        }
                    }
                    guard let json, metadataBytes + json.utf8.count <= 4 * limits.maxNameBytes else { return }
                    metadataBytes += json.utf8.count
                    metadata.append((tape.string(mk) ?? "", json))
                }
            }
        }
        guard let domain, let label else { return nil }
        metadata.sort { $0.key < $1.key }
        let object = "{" + metadata.map { Self.jsonString($0.key) + ":" + $0.json }.joined(separator: ",") + "}"
        return (ReportedState(domain: domain, label: label, metadata: object), seconds)
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    // MARK: - Shared parts

    /// `timeRange`: `begin`/`end` as seconds since 2001 (numbers) or ISO 8601 strings.
    private mutating func timeRange(_ t: Int) -> (Timestamp?, Timestamp?) {
        guard tape.kind(t) == .object else { return (nil, nil) }
        var begin: Timestamp?
        var end: Timestamp?
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "begin") {
                begin = reportTime(v)
            } else if tape.keyEquals(k, "end") {
                end = reportTime(v)
            }
        }
        return (begin, end)
    }

    /// A report date: a number of seconds since 2001-01-01, or a timestamp string.
    private mutating func reportTime(_ t: Int) -> Timestamp? {
        if tape.kind(t) == .string { return timestamp(t) }
        guard tape.kind(t) == .number, let seconds = tape.double(t) else { return nil }
        let raw = String(decoding: tape.bytes[tape.byteRange(t)], as: UTF8.self)
        let epoch = (seconds + Self.referenceDateOffset).rounded(.down)
        guard epoch.isFinite, abs(epoch) < 1e15, ValueBounds.isPlausibleEpoch(Int64(epoch)) else {
            dropped += 1
            return Timestamp(epochSeconds: nil, raw: raw)
        }
        return Timestamp(epochSeconds: Int64(epoch), raw: raw)
    }

    /// Applies an `environment` object to `meta`; returns the diagnostic-only parts (states active
    /// before the event, `signpostData` as JSON).
    mutating func environment(_ t: Int, into meta: inout DeviceMeta) throws(DecodeError) -> (
        states: [ReportedState], signpostData: String?
    ) {
        guard tape.kind(t) == .object else { return ([], nil) }
        var states: [ReportedState] = []
        var signpostData: String?
        var failure: DecodeError?
        var d = self
        tape.forEachMember(t) { k, v in
            guard failure == nil else { return }
            if tape.keyEquals(k, "latestApplicationVersion") || tape.keyEquals(k, "applicationVersion") {
                meta.appVersion = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "applicationBuildVersion") {
                meta.appBuildVersion = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "osVersion"), tape.kind(v) == .object {
                let platform = tape.member(v, "platform").flatMap { tape.nonEmptyString($0) }
                let number = tape.member(v, "number").flatMap { tape.nonEmptyString($0) }
                let build = tape.member(v, "buildNumber").flatMap { tape.nonEmptyString($0) }
                // The legacy display form, "iPhone OS 27.0 (24A435)", so OS filters match both formats.
                var text = [platform, number].compactMap { $0 }.joined(separator: " ")
                if let build { text += text.isEmpty ? build : " (\(build))" }
                meta.osVersion = text.isEmpty || text.utf8.count > limits.maxNameBytes * 2 ? nil : text
            } else if tape.keyEquals(k, "states") {
                do throws(DecodeError) {
                    states = try d.reportedStates(v).map(\.0)
                } catch {
                    failure = error
                }
            } else if tape.keyEquals(k, "signpostData") {
                if tape.rawLength(v) <= 16 * 1_024 {
                    signpostData = String(decoding: tape.bytes[tape.byteRange(v)], as: UTF8.self)
                } else {
                    d.dropped += 1
                }
            } else {
                _ = applyMetaField(key: k, value: v, to: &meta)
            }
        }
        self.unparsed = d.unparsed
        self.dropped = d.dropped
        if let failure { throw failure }
        return (states, signpostData)
    }

    // MARK: - DiagnosticReport

    /// Decodes a `DiagnosticReport`: one diagnostic, its device from `environment`, the report's
    /// `timeRange` as the payload's.
    mutating func diagnosticReport(_ root: Int) throws(DecodeError) -> DiagnosticPayload {
        var meta = DeviceMeta()
        var begin: Timestamp?
        var end: Timestamp?
        var body: (token: Int, kind: DiagnosticKind)?
        var environmentToken: Int?
        tape.forEachMember(root) { k, v in
            if tape.keyEquals(k, "timeRange") {
                (begin, end) = timeRange(v)
            } else if tape.keyEquals(k, "environment") {
                environmentToken = v
            } else if body == nil, let entry = Self.reportDiagnosticKeys.first(where: { tape.keyEquals(k, $0.key) }) {
                body = (v, entry.kind)
            }
        }
        guard let body, tape.kind(body.token) == .object else {
            throw DecodeError(
                code: .notMetricKit,
                message: "document \(document): a 2.0.0 diagnostic report needs one object of crashDiagnostic, "
                    + "hangDiagnostic, cpuExceptionDiagnostic, diskWriteExceptionDiagnostic, appLaunchDiagnostic "
                    + "or memoryExceptionDiagnostic",
                offset: tape.byteRange(root).lowerBound)
        }
        var context: (states: [ReportedState], signpostData: String?) = ([], nil)
        if let environmentToken { context = try environment(environmentToken, into: &meta) }
        var diagnostic = try diagnostic(body.token, kind: body.kind)
        diagnostic.version = "2.0.0"
        diagnostic.meta = meta
        diagnostic.appStates = context.states
        diagnostic.signpostData = context.signpostData
        var payload = DiagnosticPayload(begin: begin, end: end, diagnostics: [diagnostic])
        payload.format = .v2
        return payload
    }
}
