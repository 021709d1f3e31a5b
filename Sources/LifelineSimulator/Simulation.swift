import LifelineModel
/// One payload of a simulation, ready to post or write.
package struct GeneratedPayload: Sendable, Equatable {
    /// Metric or diagnostic document.
    package enum Kind: String, Sendable, CaseIterable {
        case metric
        case diagnostic

        /// The ingest endpoint's path.
        package var path: String { self == .metric ? "/v1/metrics" : "/v1/diagnostics" }
    }

    package var kind: Kind
    /// Device index.
    package var device: Int
    /// Day index, 0-based from the start day.
    package var day: Int
    /// The JSON document (UTF-8).
    package var json: [UInt8]
    /// Deterministic from (seed, configuration digest, device, day, kind).
    package var idempotencyKey: String
    /// `YYYY-MM-DD/d000042-metric.json.gz`-style name for `--out`.
    package var fileName: String
}

/// One device-day: its payloads, the version it ran and what was generated.
package struct DeviceDay: Sendable {
    package var version: String
    /// The metric payload, then the diagnostic payload when the day produced diagnostics.
    package var payloads: [GeneratedPayload]
    package var truth: VersionTruth
}

/// A simulated fleet of one app: a population of devices over a number of days. Every device-day
/// draws from its own random stream (seed, device, day), so any device-day can be generated alone,
/// in any order, on any thread, always with the same bytes.
package struct Simulation: Sendable {
    package let config: SimulationConfig
    package let devices: [Device]

    /// Errors of ``init(_:)``: the configuration's problems.
    package struct InvalidConfiguration: Error, CustomStringConvertible {
        package var problems: [String]
        package var description: String { problems.joined(separator: "; ") }
    }

    /// A simulation of `config`; throws when the configuration is invalid.
    package init(_ config: SimulationConfig) throws(InvalidConfiguration) {
        let problems = config.problems()
        guard problems.isEmpty else { throw InvalidConfiguration(problems: problems) }
        self.config = config
        devices = (0..<config.devices).map { Device(index: $0, config: config) }
    }

    /// Number of device-days (= metric payloads).
    package var deviceDayCount: Int { config.devices * config.days }

    /// The `n`-th device-day in send order: day by day, devices in order within a day.
    package func deviceDay(at n: Int) -> DeviceDay {
        deviceDay(device: n % config.devices, day: n / config.devices)
    }

    /// The payloads of device `device` on day `day` (0-based); `locale` overrides the device's own
    /// (tests use it to compare the same figures written in several locales).
    package func deviceDay(device index: Int, day: Int, locale: DeviceLocale? = nil) -> DeviceDay {
        generate(device: index, day: day, locale: locale, diagnostics: true)
    }

    /// The metric payload of device `device` on day `day`, the same bytes as in
    /// ``deviceDay(device:day:locale:)``, without writing the day's diagnostics (for readers of
    /// the metric figures only).
    package func metricPayload(device index: Int, day: Int) -> GeneratedPayload {
        generate(device: index, day: day, locale: nil, diagnostics: false).payloads[0]
    }

    private func generate(device index: Int, day: Int, locale: DeviceLocale?, diagnostics: Bool) -> DeviceDay {
        let device = devices[index]
        let versionIndex = device.versionIndex(day: day, config: config)
        let version = config.versions[versionIndex]
        let build = String(1200 + versionIndex * 37)
        let affected = config.scenario != .baseline && version == config.affectedVersion
        var rng = SplitMix64(seed: config.seed, stream: [UInt64(index), UInt64(day), 1])
        var activity = DayActivity(device: device, scenario: config.scenario, affected: affected, rng: &rng)
        for metric in PerfMetric.allCases {
            let factor = config.factor(metric, version: version)
            if factor != 1 { activity.perfFactors[metric] = factor }
        }
        let pid = Int64(rng.int(in: 300...99_999))
        let date = SimulationConfig.dateString(day: config.startDay + day)
        let zoneless = index % 23 == 5  // a few SDKs forward zoneless timestamps
        let begin = date + " 00:00:00" + (zoneless ? "" : " +0000")
        let end = date + " 23:59:00" + (zoneless ? "" : " +0000")

        let metric =
            config.format.sendsReports(device: index)
            ? MetricReportBuilder(
                device: device, version: version, build: build, bundleIdentifier: config.bundleIdentifier,
                activity: activity, dayStart: Int64(config.startDay + day) * 86_400
            ).report(rng: &rng)
            : MetricBuilder(
                device: device, version: version, build: build, bundleIdentifier: config.bundleIdentifier,
                activity: activity, pid: pid, begin: begin, end: end, locale: locale ?? device.locale
            ).payload(rng: &rng)
        var payloads = [make(.metric, index, day, date, metric)]

        var truth = VersionTruth()
        truth.deviceDays = 1
        truth.backgroundTaskAssertionTimeouts = activity.backgroundExits["BackgroundTaskAssertionTimeout"] ?? 0
        truth.handlerEntered = activity.handlers.reduce(0) { $0 + $1.entered }
        truth.handlerExited = activity.handlers.reduce(0) { $0 + $1.exited }
        truth.restoreAttempts = activity.restoreAttempts
        truth.restoreFailures = activity.restoreFailures
        truth.watchdogDeviceDays = activity.events.crashes.contains(where: \.isWatchdog) ? 1 : 0

        if diagnostics && !activity.events.isEmpty {
            var diagnosticRNG = SplitMix64(seed: config.seed, stream: [UInt64(index), UInt64(day), 2])
            var localized = device
            localized.locale = locale ?? device.locale
            let context = DiagnosticContext(
                device: localized, version: version, build: build, bundleIdentifier: config.bundleIdentifier,
                images: Images(
                    app: .app(config.binaryName, version: version, bundle: config.bundleIdentifier),
                    osBuild: device.os.build),
                pid: pid, lowPower: activity.lowPower)
            let json = DiagnosticBuilder.payload(
                events: activity.events, context: context, begin: begin, end: end, rng: &diagnosticRNG)
            payloads.append(make(.diagnostic, index, day, date, json))
            let e = activity.events
            truth.diagnosticPayloads = 1
            truth.diagnostics = [
                "crash": e.crashes.count, "hang": e.hangs, "cpuException": e.cpuExceptions,
                "diskWriteException": e.diskWriteExceptions, "appLaunch": e.appLaunches,
            ].filter { $0.value > 0 }
            for crash in e.crashes { truth.crashes[crash, default: 0] += 1 }
        }
        return DeviceDay(version: version, payloads: payloads, truth: truth)
    }

    private func make(_ kind: GeneratedPayload.Kind, _ device: Int, _ day: Int, _ date: String, _ json: [UInt8])
        -> GeneratedPayload
    {
        GeneratedPayload(
            kind: kind, device: device, day: day, json: json,
            idempotencyKey: Self.idempotencyKey(config: config, device: device, day: day, kind: kind),
            fileName: "\(date)/d\(Self.padded(device))-\(kind.rawValue).json.gz")
    }

    /// `sim-<seed>-<config digest>-<device>-<day>-<kind>`: the same upload always carries the same key,
    /// and a run with another configuration never collides with it.
    package static func idempotencyKey(
        config: SimulationConfig, device: Int, day: Int, kind: GeneratedPayload.Kind
    ) -> String {
        let digest = String(config.contentDigest, radix: 16)
        return "sim-\(String(config.seed, radix: 16))-\(digest)-d\(device)-\(day)-\(kind.rawValue)"
    }

    private static func padded(_ n: Int) -> String {
        let s = String(n)
        return s.count >= 7 ? s : String(repeating: "0", count: 7 - s.count) + s
    }
}
