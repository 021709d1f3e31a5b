import LifelineModel

/// Where a distribution comes from: a named metric histogram (`applicationLaunchMetrics.histogrammedTimeToFirstDrawKey`)
/// or the duration histogram of an interval signpost.
package enum HistogramSource: Sendable, Equatable, Hashable {
    case metric(String)
    case signpost(category: String, name: String)

    /// The key under which the store rolls the buckets up.
    package var storageKey: String {
        switch self {
        case .metric(let name): name
        case .signpost(let category, let name): "signpost:\(category)/\(name)"
        }
    }
}

/// Device-days and app time of one group.
package struct UsageRow: Sendable, Equatable {
    package var key: GroupKey
    /// Metric payloads in scope: one payload ≈ one device-day.
    package var payloads: Int64
    /// `applicationTimeMetrics.cumulativeForegroundTime`, summed, in ms.
    package var foregroundMilliseconds: Double
    /// `applicationTimeMetrics.cumulativeBackgroundTime`, summed, in ms.
    package var backgroundMilliseconds: Double

    package init(key: GroupKey, payloads: Int64, foregroundMilliseconds: Double, backgroundMilliseconds: Double) {
        self.key = key
        self.payloads = payloads
        self.foregroundMilliseconds = foregroundMilliseconds
        self.backgroundMilliseconds = backgroundMilliseconds
    }
}

/// Exits of one group, state and reason.
package struct ExitRow: Sendable, Equatable {
    package var key: GroupKey
    package var state: AppState
    package var reason: String
    package var count: Int64

    package init(key: GroupKey, state: AppState, reason: String, count: Int64) {
        self.key = key
        self.state = state
        self.reason = reason
        self.count = count
    }
}

/// Signpost count of one group, category and name.
package struct SignpostRow: Sendable, Equatable {
    package var key: GroupKey
    package var category: String
    package var name: String
    package var count: Int64

    package init(key: GroupKey, category: String, name: String, count: Int64) {
        self.key = key
        self.category = category
        self.name = name
        self.count = count
    }
}

/// One merged histogram bucket of one group.
package struct BucketRow: Sendable, Equatable {
    package var key: GroupKey
    package var start: Double
    package var end: Double
    package var count: Int64

    package init(key: GroupKey, start: Double, end: Double, count: Int64) {
        self.key = key
        self.start = start
        self.end = end
        self.count = count
    }
}

/// Diagnostics of one group, kind and crash group.
package struct DiagnosticRow: Sendable, Equatable {
    package var key: GroupKey
    package var kind: DiagnosticKind
    package var crashGroup: Int64
    package var count: Int64

    package init(key: GroupKey, kind: DiagnosticKind, crashGroup: Int64, count: Int64) {
        self.key = key
        self.kind = kind
        self.crashGroup = crashGroup
        self.count = count
    }
}

/// A crash group (diagnostics sharing a signature).
package struct CrashGroupInfo: Sendable, Equatable {
    package var id: Int64
    package var fingerprint: String
    package var groupKind: String
    package var title: String
    /// Epoch seconds of the first and last occurrence ever (not only in scope).
    package var firstSeen: Int64
    package var lastSeen: Int64
    package var exceptionType: Int64?
    package var signal: Int64?
    package var terminationReason: String?
    /// The attributed frames of one sample diagnostic, top first.
    package var sampleFrames: [SampleFrame]
    /// iOS 27 samples: `terminationCategory`, the process id, the `signpostData` JSON and the
    /// exception reason's composed message.
    package var terminationCategory: String?
    package var pid: Int64?
    package var signpostData: String?
    package var exceptionMessage: String?

    package init(
        id: Int64, fingerprint: String, groupKind: String, title: String, firstSeen: Int64, lastSeen: Int64,
        exceptionType: Int64?, signal: Int64?, terminationReason: String?, sampleFrames: [SampleFrame]
    ) {
        self.id = id
        self.fingerprint = fingerprint
        self.groupKind = groupKind
        self.title = title
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.exceptionType = exceptionType
        self.signal = signal
        self.terminationReason = terminationReason
        self.sampleFrames = sampleFrames
    }
}

/// One frame of a sample stack.
package struct SampleFrame: Sendable, Equatable {
    package var binaryName: String?
    package var binaryUUID: String?
    package var address: UInt64
    package var offset: UInt64

    /// From the app's debug symbols, when uploaded: the function at this frame first, then the
    /// functions it was inlined into (outermost last); empty when unknown.
    package var symbols: [FrameSymbol] = []

    package init(binaryName: String?, binaryUUID: String?, address: UInt64, offset: UInt64) {
        self.binaryName = binaryName
        self.binaryUUID = binaryUUID
        self.address = address
        self.offset = offset
    }
}

/// A function, file and line of a symbolicated frame.
package struct FrameSymbol: Sendable, Equatable {
    package var function: String?
    package var file: String?
    package var line: Int?

    package init(function: String?, file: String?, line: Int?) {
        self.function = function
        self.file = file
        self.line = line
    }
}

/// An app known to the store.
package struct AppInfo: Sendable, Equatable {
    package var bundleID: String
    package var metricPayloads: Int64
    package var diagnosticPayloads: Int64
    package var firstDay: String?
    package var lastDay: String?

    package init(
        bundleID: String, metricPayloads: Int64, diagnosticPayloads: Int64, firstDay: String?, lastDay: String?
    ) {
        self.bundleID = bundleID
        self.metricPayloads = metricPayloads
        self.diagnosticPayloads = diagnosticPayloads
        self.firstDay = firstDay
        self.lastDay = lastDay
    }
}

/// What the analysis needs from a store: pre-aggregated rows for a scope, already filtered and
/// grouped by `scope.groupBy` (rows of a group are summed by the store). Async: each store runs
/// its queries its own way (SQLite on its reader threads, PostgreSQL on postgres-nio's async API),
/// never blocking Swift's cooperative pool or NIO's threads. SQL dialects stay in
/// the store; every figure is computed from these rows by ``Analyzer`` only.
package protocol AggregateReader: Sendable {
    /// Apps with data.
    func apps() async throws -> [AppInfo]
    /// Whether the store knows `bundleID`.
    func hasApp(_ bundleID: String) async throws -> Bool
    /// Device-days and app time per group.
    func usage(_ scope: Scope) async throws -> [UsageRow]
    /// Exit counts per group, state and reason.
    func exits(_ scope: Scope) async throws -> [ExitRow]
    /// Signpost counts per group, category and name (`categories` empty: all).
    func signposts(_ scope: Scope, categories: [String]) async throws -> [SignpostRow]
    /// Merged buckets of a histogram per group.
    func buckets(_ scope: Scope, source: HistogramSource) async throws -> [BucketRow]
    /// Diagnostic counts per group, kind and crash group.
    func diagnostics(_ scope: Scope) async throws -> [DiagnosticRow]
    /// The metrics explorer's folded cells of `scope`: its days and version, OS and device
    /// filters, merged per group of its version, OS and device grouping (`day` and app states are
    /// not keys here: each row carries its app state, which ``ExplorerAnalysis`` filters), for
    /// `metrics` (catalog ids; every metric when empty).
    func explorerCells(_ scope: Scope, metrics: [String]) async throws -> [ExplorerCellRow]
    /// Details of crash groups.
    func crashGroups(app: String, ids: [Int64]) async throws -> [CrashGroupInfo]
    /// The app's own binaries seen in its diagnostics' stacks with no debug symbols, the binary in
    /// most diagnostics first (system binaries left out), at most `limit`.
    func missingSymbols(app: String, limit: Int) async throws -> [MissingSymbols]
}

/// A binary of the app's own seen in diagnostics with no debug symbols.
package struct MissingSymbols: Sendable, Equatable {
    package var uuid: String
    package var binaryName: String?
    /// Diagnostics whose stacks hold a frame of the binary.
    package var diagnostics: Int64

    package init(uuid: String, binaryName: String?, diagnostics: Int64) {
        self.uuid = uuid
        self.binaryName = binaryName
        self.diagnostics = diagnostics
    }

    /// The first `limit` of `rows` that are the app's own binaries: system binaries are told by name
    /// and UUID (LifelineModel's rule), which SQL cannot, so stores filter here.
    package static func appBinaries(_ rows: [MissingSymbols], limit: Int) -> [MissingSymbols] {
        Array(
            rows.filter { row in
                !Frame(
                    binaryUUID: row.uuid, binaryName: row.binaryName, address: 0, offsetIntoBinaryTextSegment: 0,
                    sampleCount: nil
                ).isSystemFrame
            }.prefix(limit))
    }
}
