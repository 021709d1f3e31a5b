/// The decoded shapes of MetricKit documents (`MXMetricPayload` / `MXDiagnosticPayload`
/// `jsonRepresentation()`), in the normalized form the store writes.
///
/// Everything measured is parsed into a canonical unit (see ``MeasurementUnit``); the raw
/// string is kept beside it so a value that could not be parsed is never lost.

/// The canonical unit a measurement string was converted into.
package enum MeasurementUnit: String, Sendable, Equatable, CaseIterable {
    /// Durations, in milliseconds (`"20 sec"`, `"1,530毫秒"`, `"2,717秒"`).
    case milliseconds = "ms"
    /// Sizes, in bytes (`"200,000 kB"`, `"1,106,818千字节"`, `"2,000 byte"`).
    case bytes = "bytes"
    /// CPU instructions (`"100 kiloinstructions"` → 100,000).
    case instructions = "instructions"
    /// Ratio in milliseconds per second (`"50 ms per s"`).
    case millisecondsPerSecond = "ms_per_s"
    /// Average pixel luminance (`"50 apl"`).
    case apl = "apl"
    /// Cellular signal bars (`"1 bars"`).
    case bars = "bars"
    /// A plain number without a unit.
    case count = "count"
    /// Percent (`"12 %"`).
    case percent = "percent"
}

/// One measurement string, parsed.
package struct Measurement: Sendable, Equatable {
    /// The value in ``unit``; `nil` when the raw text could not be parsed.
    package var value: Double?
    /// The canonical unit; `nil` when the raw text could not be parsed.
    package var unit: MeasurementUnit?
    /// The text as it appeared in the document.
    package var raw: String

    package init(value: Double?, unit: MeasurementUnit?, raw: String) {
        self.value = value
        self.unit = unit
        self.raw = raw
    }
}

/// The device/app description common to metric payloads and diagnostics.
/// Empty strings in the document become `nil` (they mean "unknown").
package struct DeviceMeta: Sendable, Equatable {
    package var appVersion: String?
    package var appBuildVersion: String?
    /// Display string as sent, e.g. `"iPhone OS 17.4 (21E219)"`.
    package var osVersion: String?
    /// Model identifier, e.g. `"iPhone15,2"` (contains a comma).
    package var deviceType: String?
    package var regionFormat: String?
    package var platformArchitecture: String?
    package var bundleIdentifier: String?
    package var isTestFlightApp: Bool?
    package var lowPowerModeEnabled: Bool?
    package var pid: Int64?

    package init(
        appVersion: String? = nil, appBuildVersion: String? = nil, osVersion: String? = nil,
        deviceType: String? = nil, regionFormat: String? = nil, platformArchitecture: String? = nil,
        bundleIdentifier: String? = nil, isTestFlightApp: Bool? = nil, lowPowerModeEnabled: Bool? = nil,
        pid: Int64? = nil
    ) {
        self.appVersion = appVersion
        self.appBuildVersion = appBuildVersion
        self.osVersion = osVersion
        self.deviceType = deviceType
        self.regionFormat = regionFormat
        self.platformArchitecture = platformArchitecture
        self.bundleIdentifier = bundleIdentifier
        self.isTestFlightApp = isTestFlightApp
        self.lowPowerModeEnabled = lowPowerModeEnabled
        self.pid = pid
    }
}

/// A MetricKit timestamp (`"2019-10-21 07:00:00 +0000"` or zoneless, read as UTC).
package struct Timestamp: Sendable, Equatable {
    /// Seconds since 1970-01-01 UTC; `nil` when the text could not be parsed.
    package var epochSeconds: Int64?
    /// The text as it appeared in the document.
    package var raw: String

    package init(epochSeconds: Int64?, raw: String) {
        self.epochSeconds = epochSeconds
        self.raw = raw
    }
}

/// Foreground or background, for exit counts.
package enum AppState: String, Sendable, Equatable, CaseIterable {
    case foreground
    case background
}

/// One exit counter: `backgroundExitData.cumulativeMemoryPressureExitCount = 13` becomes
/// `ExitCount(state: .background, reason: "MemoryPressure", count: 13)`.
/// The reason is the JSON key without `cumulative` / `ExitCount`, so unknown future reasons pass through.
package struct ExitCount: Sendable, Equatable {
    package var state: AppState
    package var reason: String
    package var count: Int64

    package init(state: AppState, reason: String, count: Int64) {
        self.state = state
        self.reason = reason
        self.count = count
    }
}

/// One histogram bucket; start and end in the histogram's canonical unit.
package struct HistogramBucket: Sendable, Equatable {
    package var start: Double?
    package var end: Double?
    package var count: Int64

    package init(start: Double?, end: Double?, count: Int64) {
        self.start = start
        self.end = end
        self.count = count
    }
}

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

/// A named histogram of a metric payload. Names are `section.key`, e.g.
/// `applicationLaunchMetrics.histogrammedTimeToFirstDrawKey`,
/// `applicationResponsivenessMetrics.histogrammedAppHangTime`,
/// `cellularConditionMetrics.cellConditionTime`.
package struct NamedHistogram: Sendable, Equatable {
    package var name: String
    package var histogram: Histogram

    package init(name: String, histogram: Histogram) {
        self.name = name
        self.histogram = histogram
    }
}

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

/// One entry of `signpostMetrics`.
package struct SignpostMetric: Sendable, Equatable {
    package var category: String
    package var name: String
    package var totalCount: Int64
    /// `signpostIntervalData.histogrammedSignpostDurations` (interval signposts only).
    package var durations: Histogram?
    /// `signpostCumulativeCPUTime`, in ms.
    package var cumulativeCPUTime: Measurement?
    /// `signpostAverageMemory`, in bytes.
    package var averageMemory: Measurement?
    /// `signpostCumulativeLogicalWrites`, in bytes.
    package var cumulativeLogicalWrites: Measurement?
    /// `signpostCumulativeHitchTimeRatio`, in ms per s.
    package var cumulativeHitchTimeRatio: Measurement?

    package init(
        category: String, name: String, totalCount: Int64, durations: Histogram? = nil,
        cumulativeCPUTime: Measurement? = nil, averageMemory: Measurement? = nil,
        cumulativeLogicalWrites: Measurement? = nil, cumulativeHitchTimeRatio: Measurement? = nil
    ) {
        self.category = category
        self.name = name
        self.totalCount = totalCount
        self.durations = durations
        self.cumulativeCPUTime = cumulativeCPUTime
        self.averageMemory = averageMemory
        self.cumulativeLogicalWrites = cumulativeLogicalWrites
        self.cumulativeHitchTimeRatio = cumulativeHitchTimeRatio
    }
}

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

/// The five MetricKit diagnostic kinds.
package enum DiagnosticKind: String, Sendable, Equatable, CaseIterable {
    case crash
    case hang
    case cpuException = "cpu_exception"
    case diskWriteException = "disk_write_exception"
    case appLaunch = "app_launch"
}

/// One frame of a call-stack tree. `address` needs 64 bits.
package struct Frame: Sendable, Equatable {
    package var binaryUUID: String?
    package var binaryName: String?
    package var address: UInt64
    /// As sent. On iOS 14.0.x this wrongly holds the image load address.
    package var offsetIntoBinaryTextSegment: UInt64
    package var sampleCount: Int64?

    package init(
        binaryUUID: String?, binaryName: String?, address: UInt64, offsetIntoBinaryTextSegment: UInt64,
        sampleCount: Int64?
    ) {
        self.binaryUUID = binaryUUID
        self.binaryName = binaryName
        self.address = address
        self.offsetIntoBinaryTextSegment = offsetIntoBinaryTextSegment
        self.sampleCount = sampleCount
    }
}

/// A frame with its position in the tree, produced by an iterative walk (pre-order).
package struct FlatFrame: Sendable, Equatable {
    /// 0 for a root frame.
    package var depth: Int
    package var frame: Frame

    package init(depth: Int, frame: Frame) {
        self.depth = depth
        self.frame = frame
    }
}

/// One thread (per-thread trees) or one root set (flame-graph trees) of a call-stack tree.
package struct CallStack: Sendable, Equatable {
    package var threadAttributed: Bool?
    /// The frames, flattened in pre-order with their depth.
    package var frames: [FlatFrame]

    package init(threadAttributed: Bool?, frames: [FlatFrame]) {
        self.threadAttributed = threadAttributed
        self.frames = frames
    }
}

/// A `callStackTree`.
package struct CallStackTree: Sendable, Equatable {
    package var callStackPerThread: Bool
    package var callStacks: [CallStack]

    package init(callStackPerThread: Bool, callStacks: [CallStack]) {
        self.callStackPerThread = callStackPerThread
        self.callStacks = callStacks
    }

    /// The frames of the attributed thread, top of stack first, following the first child at
    /// each level (for per-thread trees); for flame graphs, the heaviest root's first chain.
    package var attributedChain: [Frame] {
        guard let stack = callStacks.first(where: { $0.threadAttributed == true }) ?? callStacks.first else {
            return []
        }
        var chain: [Frame] = []
        var expectedDepth = 0
        for flat in stack.frames {
            if flat.depth == expectedDepth {
                chain.append(flat.frame)
                expectedDepth += 1
            } else if flat.depth < expectedDepth {
                break
            }
        }
        return chain
    }
}

/// An Objective-C exception reason attached to a crash (iOS 17+).
package struct ExceptionReason: Sendable, Equatable {
    package var composedMessage: String?
    package var formatString: String?
    package var arguments: [String]
    package var exceptionType: String?
    package var className: String?
    package var exceptionName: String?

    package init(
        composedMessage: String? = nil, formatString: String? = nil, arguments: [String] = [],
        exceptionType: String? = nil, className: String? = nil, exceptionName: String? = nil
    ) {
        self.composedMessage = composedMessage
        self.formatString = formatString
        self.arguments = arguments
        self.exceptionType = exceptionType
        self.className = className
        self.exceptionName = exceptionName
    }
}

/// One diagnostic (crash, hang, CPU exception, disk-write exception, app launch).
package struct Diagnostic: Sendable, Equatable {
    package var kind: DiagnosticKind
    package var version: String?
    /// This diagnostic's own metadata; it decides its app version.
    package var meta: DeviceMeta
    package var exceptionType: Int64?
    package var exceptionCode: Int64?
    package var signal: Int64?
    package var terminationReason: String?
    package var virtualMemoryRegionInfo: String?
    package var exceptionReason: ExceptionReason?
    /// hang: `hangDuration` (ms); appLaunch: `launchDuration` (ms);
    /// cpuException: `totalCPUTime` (ms); diskWrite: `writesCaused` (bytes).
    package var primaryMeasurement: Measurement?
    /// cpuException: `totalSampledTime` (ms).
    package var totalSampledTime: Measurement?
    package var callStackTree: CallStackTree?
    /// Stable crash signature, see ``CrashSignature``.
    package var signature: CrashSignature

    package init(
        kind: DiagnosticKind, version: String?, meta: DeviceMeta, exceptionType: Int64? = nil,
        exceptionCode: Int64? = nil, signal: Int64? = nil, terminationReason: String? = nil,
        virtualMemoryRegionInfo: String? = nil, exceptionReason: ExceptionReason? = nil,
        primaryMeasurement: Measurement? = nil, totalSampledTime: Measurement? = nil,
        callStackTree: CallStackTree? = nil, signature: CrashSignature
    ) {
        self.kind = kind
        self.version = version
        self.meta = meta
        self.exceptionType = exceptionType
        self.exceptionCode = exceptionCode
        self.signal = signal
        self.terminationReason = terminationReason
        self.virtualMemoryRegionInfo = virtualMemoryRegionInfo
        self.exceptionReason = exceptionReason
        self.primaryMeasurement = primaryMeasurement
        self.totalSampledTime = totalSampledTime
        self.callStackTree = callStackTree
        self.signature = signature
    }
}

/// A grouping signature that survives app rebuilds: kind + exception type + signal + the first
/// frames of the attributed thread that belong to the app's own binaries (binary name + offset),
/// falling back to system frames. Watchdog terminations (`0x8BADF00D`) get their own group kind.
package struct CrashSignature: Sendable, Equatable {
    /// Hex SHA-256-free stable hash (FNV-1a 64, 16 hex chars) of ``components``.
    package var fingerprint: String
    /// e.g. `crash`, `watchdog`, `hang`, `cpu_exception`…
    package var groupKind: String
    /// Human-readable title, e.g. `EXC_BAD_ACCESS / SIGSEGV at MyApp +0x1a2b`.
    package var title: String
    /// The frames that went into the fingerprint, top first.
    package var frames: [Frame]

    package init(fingerprint: String, groupKind: String, title: String, frames: [Frame]) {
        self.fingerprint = fingerprint
        self.groupKind = groupKind
        self.title = title
        self.frames = frames
    }
}

/// An `MXDiagnosticPayload` (or a bare diagnostic, wrapped, with no timestamps).
package struct DiagnosticPayload: Sendable, Equatable {
    package var begin: Timestamp?
    package var end: Timestamp?
    package var diagnostics: [Diagnostic]

    package init(begin: Timestamp?, end: Timestamp?, diagnostics: [Diagnostic]) {
        self.begin = begin
        self.end = end
        self.diagnostics = diagnostics
    }
}

/// What one document of a request body decoded into.
package enum DocumentContent: Sendable, Equatable {
    case metric(MetricPayload)
    case diagnostic(DiagnosticPayload)
}

/// One decoded document plus where it sat in the body, so its own bytes can be hashed and kept.
package struct DecodedDocument: Sendable, Equatable {
    package var content: DocumentContent
    /// Byte range of this document inside the decoded (decompressed) body.
    package var byteRange: Range<Int>
    /// How many measurement strings could not be parsed (stored as NULL + raw text).
    package var unparsedMeasurements: Int
    /// How many values were dropped as implausible (negative, non-finite, past ``ValueBounds``) or
    /// for an over-long name; they stay in the raw document and are never summed into a figure.
    package var droppedValues: Int

    package init(content: DocumentContent, byteRange: Range<Int>, unparsedMeasurements: Int, droppedValues: Int = 0) {
        self.content = content
        self.byteRange = byteRange
        self.unparsedMeasurements = unparsedMeasurements
        self.droppedValues = droppedValues
    }

    /// The bundle identifier the document claims (metric `metaData` or the first diagnostic's).
    package var bundleIdentifier: String? {
        switch content {
        case .metric(let m): return m.meta.bundleIdentifier
        case .diagnostic(let d): return d.diagnostics.lazy.compactMap(\.meta.bundleIdentifier).first
        }
    }
}

/// Which endpoint a body was posted to: it decides the shapes accepted.
package enum DocumentFamily: String, Sendable {
    case metric
    case diagnostic
}

/// Limits applied while decoding; defaults are documented in the README.
package struct DecodeLimits: Sendable, Equatable {
    /// Maximum JSON nesting depth (objects + arrays). Default 512.
    package var maxDepth: Int = 512
    /// Maximum frames in one call-stack tree. Default 100,000.
    package var maxFramesPerTree: Int = 100_000
    /// Maximum length of one JSON string in bytes. Default 1 MiB.
    package var maxStringBytes: Int = 1 << 20
    /// Maximum documents in one array body. Default 1,000.
    package var maxDocuments: Int = 1_000
    /// Maximum frames in all the call-stack trees of one body together. Default 250,000.
    package var maxFramesPerBody: Int = 250_000
    /// Maximum scalar metrics plus histograms in one metric document (Apple's payloads hold ~40). Default 1,024.
    package var maxMetricsPerDocument: Int = 1_024
    /// Maximum scalar metrics plus histograms in all the documents of one body: each becomes a
    /// stored row, so this bounds the storage work one request can buy. Default 32,768.
    package var maxMetricsPerBody: Int = 32_768
    /// Maximum exit-count entries in one metric document (real ones hold ~24). Default 1,024.
    package var maxExitEntriesPerDocument: Int = 1_024
    /// Maximum signpost entries in one metric document. Default 4,096.
    package var maxSignpostsPerDocument: Int = 4_096
    /// Maximum buckets in one histogram. Default 4,096.
    package var maxBucketsPerHistogram: Int = 4_096
    /// Longest metric name (`section.sub.key`), exit reason, signpost name or binary name, in bytes;
    /// a longer one is dropped (counted in ``DecodedDocument/droppedValues``). Default 256.
    package var maxNameBytes: Int = 256

    package init() {}
}

/// Why a body could not be decoded.
package struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// Not well-formed JSON (HTTP 400).
        case malformedJSON = "malformed_json"
        /// Well-formed JSON that is not a MetricKit document of the expected family (HTTP 422).
        case notMetricKit = "not_metrickit"
        /// A decode limit was exceeded (HTTP 413 for size-like limits, 422 otherwise).
        case limitExceeded = "limit_exceeded"
    }

    package var code: Code
    package var message: String
    /// Byte offset in the body where the problem was found, when known.
    package var offset: Int?

    package init(code: Code, message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    package var description: String {
        if let offset { return "\(code.rawValue): \(message) (at byte \(offset))" }
        return "\(code.rawValue): \(message)"
    }
}
