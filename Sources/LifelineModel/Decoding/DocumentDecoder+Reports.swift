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

    /// The document's top-level `"version"` string, if any (2.0.0 reports and bare diagnostics carry one).
    static func topLevelVersion(_ tape: JSONTape, _ t: Int) -> String? {
        var version: String?
        tape.forEachMember(t) { k, v in
            if version == nil, tape.keyEquals(k, "version") { version = tape.string(v).map { String($0.prefix(32)) } }
        }
        return version
    }

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
}
