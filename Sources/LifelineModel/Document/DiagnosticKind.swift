/// The MetricKit diagnostic kinds (`memory_exception` only in iOS 27 reports).
package enum DiagnosticKind: String, Sendable, Equatable, CaseIterable {
    case crash
    case hang
    case cpuException = "cpu_exception"
    case diskWriteException = "disk_write_exception"
    case appLaunch = "app_launch"
    case memoryException = "memory_exception"
}
