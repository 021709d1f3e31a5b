/// The five MetricKit diagnostic kinds.
package enum DiagnosticKind: String, Sendable, Equatable, CaseIterable {
    case crash
    case hang
    case cpuException = "cpu_exception"
    case diskWriteException = "disk_write_exception"
    case appLaunch = "app_launch"
}
