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
