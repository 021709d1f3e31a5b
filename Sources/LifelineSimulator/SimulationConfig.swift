import LifelineModel
import Foundation

/// Everything that decides the simulated payloads. Two runs with equal configs produce
/// byte-identical payloads.
package struct SimulationConfig: Sendable, Equatable {
    /// The app's bundle identifier; its last component names the app binary in call stacks.
    package var bundleIdentifier: String
    /// Number of devices in the fleet.
    package var devices = 100
    /// Number of simulated days; each device sends one metric payload per day.
    package var days = 7
    /// First simulated day, in days since 1970-01-01 (UTC).
    package var startDay: Int
    /// App versions, oldest first; newer ones are adopted progressively over the days.
    package var versions = ["4.1.0", "4.2.0"]
    /// What goes wrong.
    package var scenario = Scenario.baseline
    /// The version the scenario acts on; `nil` means the newest.
    package var scenarioVersion: String?
    /// Seed of every random choice.
    package var seed: UInt64 = 1
    /// Which JSON the fleet sends: legacy payloads, iOS 27 reports, or both (every other device
    /// sends 2.0.0 metric reports; diagnostics stay legacy).
    package var format = PayloadFormatChoice.mixed
    /// `perf-regression`: what every value of a regressed metric of the version is multiplied by
    /// (1.3: 30 % worse).
    package var regressionFactor = 1.3
    /// `perf-regression`: the metrics made worse (sorted, distinct).
    package var regressionMetrics = PerfMetric.allCases

    /// A configuration with defaults; `startDay` defaults to `days` before today (UTC).
    package init(bundleIdentifier: String, days: Int = 7, startDay: Int? = nil) {
        self.bundleIdentifier = bundleIdentifier
        self.days = days
        self.startDay = startDay ?? (Int(Date().timeIntervalSince1970) / 86_400 - days)
    }

    /// The version the scenario acts on.
    package var affectedVersion: String {
        scenarioVersion ?? versions.last ?? ""
    }

    /// What every value of `metric` on `version` is multiplied by: ``regressionFactor`` for the
    /// regressed metrics of the affected version under `perf-regression`, else 1.
    package func factor(_ metric: PerfMetric, version: String) -> Double {
        scenario == .perfRegression && version == affectedVersion && regressionMetrics.contains(metric)
            ? regressionFactor : 1
    }

    /// The app binary's name: the last component of the bundle id (`com.example.notes` → `notes`).
    package var binaryName: String {
        bundleIdentifier.split(separator: ".").last.map(String.init) ?? bundleIdentifier
    }

    /// Problems with the configuration, as sentences; empty when it is valid.
    package func problems() -> [String] {
        var problems: [String] = []
        if bundleIdentifier.isEmpty { problems.append("the bundle identifier is empty") }
        if devices < 1 || devices > 10_000_000 { problems.append("devices must be 1…10,000,000") }
        if days < 1 || days > 3650 { problems.append("days must be 1…3650") }
        if versions.isEmpty { problems.append("give at least one app version") }
        if Set(versions).count != versions.count { problems.append("app versions must be distinct") }
        if let scenarioVersion, !versions.contains(scenarioVersion) {
            problems.append("the scenario version \(scenarioVersion) is not one of \(versions.joined(separator: ","))")
        }
        if scenario == .perfRegression {
            if !(regressionFactor >= 0.1 && regressionFactor <= 10) {
                problems.append("the regression factor must be 0.1…10 (1.3 makes the metrics 30 % worse)")
            }
            if regressionMetrics.isEmpty { problems.append("give at least one regression metric") }
            if versions.count < 2 {
                problems.append("perf-regression needs at least two app versions (the older ones are the reference)")
            }
        }
        return problems
    }

    /// A short digest of everything that shapes payload content, mixed into idempotency keys so
    /// that a run with another scenario or population is never answered from a previous run's replay.
    /// `perf-regression` mixes in its factor and metrics (the other scenarios' keys are unchanged).
    package var contentDigest: UInt64 {
        let digest = stableHash(
            bundleIdentifier, String(devices), String(days), String(startDay), versions.joined(separator: ","),
            scenario.rawValue, affectedVersion, format.rawValue)
        guard scenario == .perfRegression else { return digest }
        return stableHash(
            String(digest), String(regressionFactor), regressionMetrics.map(\.rawValue).joined(separator: ","))
    }

    /// `YYYY-MM-DD` of a day number (days since 1970-01-01).
    package static func dateString(day: Int) -> String {
        let (year, month, dayOfMonth) = UTCDay.date(fromDays: day)
        let y = String(year)
        let m = month < 10 ? "0\(month)" : "\(month)"
        let d = dayOfMonth < 10 ? "0\(dayOfMonth)" : "\(dayOfMonth)"
        return "\(y)-\(m)-\(d)"
    }

    /// Parses `YYYY-MM-DD` into days since 1970-01-01; `nil` if it is not a valid date.
    package static func day(from text: String) -> Int? {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            parts[0].count == 4, UTCDay.isValid(year: y, month: m, day: d)
        else { return nil }
        return UTCDay.days(year: y, month: m, day: d)
    }
}

/// `lifeline simulate --format`.
package enum PayloadFormatChoice: String, Sendable, CaseIterable {
    /// `jsonRepresentation()` of `MXMetricPayload` / `MXDiagnosticPayload` only.
    case v1
    /// iOS 27 `MetricReport` for every device.
    case v2
    /// Even-numbered devices send `MetricReport`s, the others legacy payloads.
    case mixed

    /// Whether device `index` sends 2.0.0 metric reports.
    func sendsReports(device index: Int) -> Bool {
        switch self {
        case .v1: false
        case .v2: true
        case .mixed: index % 2 == 0
        }
    }
}
