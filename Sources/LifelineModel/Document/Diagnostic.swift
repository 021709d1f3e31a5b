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
    /// iOS 27: `terminationCategory` (`badAccess`, `abnormal`, `watchdog`…).
    package var terminationCategory: String?
    /// iOS 27: the app states active just before the event (`environment.states`).
    package var appStates: [ReportedState] = []
    /// iOS 27: `environment.signpostData` as sent (a JSON array; bounded), if any.
    package var signpostData: String?

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
