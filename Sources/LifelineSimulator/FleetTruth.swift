/// What the simulator generated, per app version: the figures Lifeline should find.
package struct VersionTruth: Sendable, Equatable {
    /// Device-days (= metric payloads) on this version.
    package var deviceDays = 0
    /// Diagnostic payloads.
    package var diagnosticPayloads = 0
    /// Diagnostics by kind (`crash`, `hang`, `cpuException`, `diskWriteException`, `appLaunch`).
    package var diagnostics: [String: Int] = [:]
    /// Crash diagnostics by simulated signature.
    package var crashes: [SimulatedCrash: Int] = [:]
    /// Device-days with at least one watchdog (0x8BADF00D) termination.
    package var watchdogDeviceDays = 0
    /// Background `BackgroundTaskAssertionTimeout` exits.
    package var backgroundTaskAssertionTimeouts = 0
    /// `BackgroundSyncExpirationHandlerEntered` + `UploadExpirationHandlerEntered`.
    package var handlerEntered = 0
    /// `…Exited` of the same handlers.
    package var handlerExited = 0
    /// `StateRestoration/RestoreAttempt`.
    package var restoreAttempts = 0
    /// `StateRestoration/RestoreFailed`.
    package var restoreFailures = 0

    /// Adds another tally.
    package mutating func add(_ other: VersionTruth) {
        deviceDays += other.deviceDays
        diagnosticPayloads += other.diagnosticPayloads
        diagnostics.merge(other.diagnostics, uniquingKeysWith: +)
        crashes.merge(other.crashes, uniquingKeysWith: +)
        watchdogDeviceDays += other.watchdogDeviceDays
        backgroundTaskAssertionTimeouts += other.backgroundTaskAssertionTimeouts
        handlerEntered += other.handlerEntered
        handlerExited += other.handlerExited
        restoreAttempts += other.restoreAttempts
        restoreFailures += other.restoreFailures
    }
}

/// Ground truth of a whole simulation, by app version.
package struct FleetTruth: Sendable, Equatable {
    /// Tallies keyed by app version.
    package var versions: [String: VersionTruth] = [:]

    /// An empty tally.
    package init() {}

    /// Adds one device-day's tally.
    package mutating func add(version: String, _ truth: VersionTruth) {
        versions[version, default: VersionTruth()].add(truth)
    }

    /// A fixed-width table, one row per version in `order`.
    package func table(order: [String]) -> String {
        func pct(_ part: Int, _ whole: Int) -> String {
            guard whole > 0 else { return "-" }
            let basisPoints = (part * 100_000 + whole / 2) / whole
            return "\(basisPoints / 1000).\(String(basisPoints % 1000 + 1000).dropFirst())%"
        }
        func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
        var lines = [
            [
                "version", "device-days", "diag", "crashes", "watchdog%dd", "bgTaskTimeout", "entered", "exited",
                "restoreFail%",
            ]
            .map { pad($0, 14) }.joined()
        ]
        for version in order {
            guard let t = versions[version] else { continue }
            let crashes = t.crashes.values.reduce(0, +)
            lines.append(
                [
                    version, String(t.deviceDays), String(t.diagnosticPayloads), String(crashes),
                    pct(t.watchdogDeviceDays, t.deviceDays), String(t.backgroundTaskAssertionTimeouts),
                    String(t.handlerEntered), String(t.handlerExited), pct(t.restoreFailures, t.restoreAttempts),
                ]
                .map { pad($0, 14) }.joined())
        }
        return lines.joined(separator: "\n")
    }
}
