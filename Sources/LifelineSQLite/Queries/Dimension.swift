/// A lookup table mapping repeated strings to small integer ids.
enum Dimension: String, CaseIterable, Sendable {
    case app = "apps"
    case appVersion = "app_versions"
    case build = "builds"
    case osVersion = "os_versions"
    case deviceType = "device_types"
    case region = "regions"
    case architecture = "architectures"
    case exitReason = "exit_reasons"
    case metricName = "metric_names"
    case signpostCategory = "signpost_categories"
    case signpostName = "signpost_names"

    /// Name of the table.
    var table: String { rawValue }

    /// Name of the string column.
    var column: String { self == .app ? "bundle_id" : "value" }

    /// Longest value the table accepts (longer strings are cut at a character boundary).
    var maxLength: Int { self == .app ? 255 : 1_024 }

    var selectSQL: String { "SELECT id FROM \(table) WHERE \(column) = ?" }
    var insertSQL: String { "INSERT INTO \(table) (\(column)) VALUES (?)" }
}
