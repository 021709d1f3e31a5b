// Declaration stand-ins of the MetricKit surface LifelineKit's adapters use, compiled only where MetricKit
// does not exist (Linux CI), so that Sources/LifelineKit/MetricKitAdapters.swift type-checks there. Nothing
// links this module and nothing runs it: its bodies only satisfy the compiler. The legacy declarations
// follow Apple's MetricKit headers; the iOS 27 ones (`MetricManager.metricReports`/`diagnosticReports`) are
// assumed from shared/docs/METRICKIT-27.md (async sequences of Codable reports) and need checking against
// the real SDK.
#if LIFELINEKIT_METRICKIT_STANDINS && !canImport(MetricKit)
    import Foundation

    /// `MXMetricPayload`: one day of metrics.
    open class MXMetricPayload: NSObject {
        /// The payload's JSON.
        open func jsonRepresentation() -> Data { Data() }
    }

    /// `MXDiagnosticPayload`: diagnostics (crashes, hangs…).
    open class MXDiagnosticPayload: NSObject {
        /// The payload's JSON.
        open func jsonRepresentation() -> Data { Data() }
    }

    /// `MXMetricManagerSubscriber` (both requirements are optional in Objective-C).
    public protocol MXMetricManagerSubscriber: NSObjectProtocol {
        /// Metric payloads.
        func didReceive(_ payloads: [MXMetricPayload])
        /// Diagnostic payloads.
        func didReceive(_ payloads: [MXDiagnosticPayload])
    }

    /// `MXMetricManager`.
    open class MXMetricManager: NSObject {
        /// The shared manager.
        open class var shared: MXMetricManager { MXMetricManager() }
        /// Metric payloads delivered since the manager was first allocated.
        open var pastPayloads: [MXMetricPayload] { [] }
        /// Diagnostic payloads delivered since the manager was first allocated.
        open var pastDiagnosticPayloads: [MXDiagnosticPayload] { [] }
        /// Adds a subscriber.
        open func add(_ subscriber: any MXMetricManagerSubscriber) {}
        /// Removes a subscriber.
        open func remove(_ subscriber: any MXMetricManagerSubscriber) {}
    }

    /// iOS 27 `MetricReport` (Codable).
    public struct MetricReport: Codable, Sendable {}

    /// iOS 27 `DiagnosticReport` (Codable).
    public struct DiagnosticReport: Codable, Sendable {}

    /// iOS 27 `MetricManager`: reports arrive through async sequences.
    public final class MetricManager: Sendable {
        /// A manager.
        public init() {}
        /// Metric reports as they are delivered.
        public var metricReports: AsyncStream<MetricReport> { AsyncStream { $0.finish() } }
        /// Diagnostic reports as they are delivered.
        public var diagnosticReports: AsyncStream<DiagnosticReport> { AsyncStream { $0.finish() } }
    }

    extension ProcessInfo {
        /// `performExpiringActivity(withReason:using:)` of Apple's Foundation.
        public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void)
        {
        }
    }
#endif
