/// The small, realistic set of crash signatures a simulated app suffers from.
package enum SimulatedCrash: String, Sendable, CaseIterable, Comparable {
    /// EXC_BAD_ACCESS / SIGSEGV in `FeedCell.configure` (foreground, BadAccess exit).
    case feedCellBadAccess = "segv-feed-cell"
    /// EXC_BAD_ACCESS / SIGSEGV in `SyncEngine.mergeRecords` on a dispatch queue (background).
    case syncBadAccess = "segv-sync-engine"
    /// EXC_CRASH / SIGABRT from an uncaught NSRangeException in `ExportController.export`.
    case uncaughtException = "sigabrt-nsrangeexception"
    /// EXC_BREAKPOINT / SIGTRAP: a Swift runtime trap (force unwrap) in `ProfileViewModel.load`.
    case swiftTrap = "sigtrap-swift-unwrap"
    /// EXC_BAD_ACCESS / SIGSEGV: stack overflow, `JSONNode.render` recursing 90+ frames deep.
    case stackOverflow = "segv-stack-overflow"
    /// EXC_CRASH / SIGKILL, 0x8BADF00D: the launch watchdog while `AppDelegate.migrateDatabase` waits.
    case launchWatchdog = "watchdog-launch"
    /// EXC_CRASH / SIGKILL, 0x8BADF00D: the suspension watchdog in the background.
    case suspendWatchdog = "watchdog-suspend"
    /// EXC_BAD_ACCESS / SIGSEGV in `ImageCache.decode`: only in the `crash-spike` scenario.
    case imageCacheBadAccess = "segv-image-cache"

    package static func < (a: SimulatedCrash, b: SimulatedCrash) -> Bool { a.rawValue < b.rawValue }

    /// Whether the process was in the background.
    var background: Bool { self == .syncBadAccess || self == .suspendWatchdog }

    /// The exit counter this crash increments.
    var exitReason: String {
        switch self {
        case .feedCellBadAccess, .syncBadAccess, .stackOverflow, .imageCacheBadAccess: "BadAccess"
        case .uncaughtException: "Abnormal"
        case .swiftTrap: "IllegalInstruction"
        case .launchWatchdog, .suspendWatchdog: "AppWatchdog"
        }
    }

    /// Whether this is a watchdog (0x8BADF00D) termination.
    package var isWatchdog: Bool { self == .launchWatchdog || self == .suspendWatchdog }

    /// Odds per device-day at activity 1, before scenarios.
    var baselineRate: Double {
        switch self {
        case .feedCellBadAccess: 0.003
        case .syncBadAccess: 0.0015
        case .uncaughtException: 0.0015
        case .swiftTrap: 0.002
        case .stackOverflow: 0.0008
        case .launchWatchdog: 0.0003
        case .suspendWatchdog: 0.0001
        case .imageCacheBadAccess: 0
        }
    }

    /// (exceptionType, exceptionCode, signal) as MetricKit sends them (raw Mach/POSIX numbers).
    var codes: (type: Int64, code: Int64, signal: Int64) {
        switch self {
        case .feedCellBadAccess, .syncBadAccess, .imageCacheBadAccess: (1, 1, 11)
        case .stackOverflow: (1, 2, 11)
        case .uncaughtException: (10, 0, 6)
        case .swiftTrap: (6, 1, 5)
        case .launchWatchdog, .suspendWatchdog: (10, 0, 9)
        }
    }
}

/// Offsets of the simulated app's functions in its text segment (stable across builds, so crash
/// groups span versions).
enum AppFunction {
    static let main: UInt64 = 0x8A1C
    static let didFinishLaunching: UInt64 = 0xE9A0
    static let migrateDatabase: UInt64 = 0xF1C4
    static let feedCellConfigure: UInt64 = 0x1A2B4
    static let feedCellForRow: UInt64 = 0x1B0C8
    static let feedDataSourceApply: UInt64 = 0x1C940
    static let profileLoad: UInt64 = 0x27F8C
    static let profileViewWillAppear: UInt64 = 0x2811C
    static let syncMerge: UInt64 = 0x3C410
    static let syncRun: UInt64 = 0x3D1F0
    static let syncSchedulerFire: UInt64 = 0x3E88C
    static let databaseQuery: UInt64 = 0x44C20
    static let timelineReload: UInt64 = 0x45A10
    static let exportExport: UInt64 = 0x52E10
    static let exportButtonTapped: UInt64 = 0x53A04
    static let jsonNodeRender: UInt64 = 0x61A08
    static let documentLayout: UInt64 = 0x62B30
    static let imageCacheDecode: UInt64 = 0x7D3A8
    static let thumbnailLoad: UInt64 = 0x7E010
    static let analyticsFlush: UInt64 = 0x91E30
    static let compressorDeflate: UInt64 = 0x93A10
    static let diskCacheWrite: UInt64 = 0xA2C08
}
