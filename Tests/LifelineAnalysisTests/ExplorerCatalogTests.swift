import Foundation
import LifelineAnalysis
import LifelineModel
import Testing

/// The shared MetricKit fixtures beside the repository, decoded.
enum ExplorerFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/metrickit")

    static func files(_ folder: String, containing text: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)
            .filter { $0.hasSuffix(".json") && (text.isEmpty || $0.contains(text)) }.sorted()
            .map { folder + "/" + $0 }
    }

    static func documents(_ relative: String) throws -> [DocumentContent] {
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(relative)))
        return try MetricKitDecoder.decode(bytes, family: nil).map(\.content)
    }

    static func metric(_ relative: String) throws -> MetricPayload {
        for case .metric(let payload) in try documents(relative) { return payload }
        throw FixtureError(description: "\(relative) holds no metric payload")
    }

    /// Every metric payload fixture of both formats.
    static var metricFiles: [String] {
        get throws { try files("metrics") + files("ios27", containing: "metric") }
    }

    struct FixtureError: Error, CustomStringConvertible { var description: String }
}

@Suite("Explorer catalog and extractor")
struct ExplorerCatalogTests {
    @Test("ids are unique, every category the issue lists has its metrics, and units and kinds are set")
    func catalogShape() throws {
        let ids = ExplorerCatalog.metrics.map(\.id)
        #expect(Set(ids).count == ids.count)
        for category in ExplorerCategory.allCases {
            #expect(!ExplorerCatalog.metrics(in: category).isEmpty, "\(category)")
        }
        for id in ids { #expect(id.hasPrefix(try #require(ExplorerCatalog.metric(id)).category.rawValue + ".")) }
        let required = [
            "launch.time_to_first_draw", "launch.optimized_time_to_first_draw", "launch.resume_time",
            "launch.extended_launch", "hang.hang_time", "hang.seconds_per_foreground_hour", "memory.peak",
            "memory.average_suspended", "disk.logical_writes", "battery.cpu_time", "battery.cpu_instructions",
            "battery.gpu_time", "battery.location_best_accuracy", "battery.location_reduced_accuracy",
            "battery.display_average_pixel_luminance", "battery.wifi_upload", "battery.wifi_download",
            "battery.cellular_upload", "battery.cellular_download", "battery.cellular_condition",
            "animation.scroll_hitch_time_ratio", "animation.hitch_time_ratio", "animation.signpost_hitch_time_ratio",
            "termination.foreground.bad_access.per_device_day",
            "termination.background.memory_pressure.per_foreground_hour",
        ]
        for id in required { #expect(ExplorerCatalog.metric(id) != nil, "\(id)") }
        // 7 foreground and 12 background reasons, each per device-day and per foreground hour.
        #expect(ExplorerCatalog.metrics(in: .termination).count == (7 + 12) * 2)
        #expect(ExplorerCatalog.metrics.count == 66)  // the README's count
        let launch = try #require(ExplorerCatalog.metric("launch.time_to_first_draw"))
        #expect(launch.kind == .histogram && launch.unit == .milliseconds && launch.lowerIsBetter == true)
        #expect(launch.appleIdentifier == "launchTime" && launch.goalBand == nil)
        let rate = try #require(ExplorerCatalog.metric("hang.seconds_per_foreground_hour"))
        #expect(rate.kind == .ratePerForegroundHour && rate.unit == .secondsPerHour)
        #expect(ExplorerCatalog.metric("memory.peak")?.kind == .deviceDayValue)
        #expect(ExplorerCatalog.metric("battery.cellular_condition")?.lowerIsBetter == false)
        #expect(ExplorerCatalog.metric("termination.foreground.normal_app.per_device_day")?.lowerIsBetter == nil)
        #expect(
            ExplorerCatalog.metric("animation.scroll_hitch_time_ratio")?.goalBand == OrganizerGoals.scrollHitchTimeRatio
        )
        #expect(ExplorerCatalog.metric("animation.hitch_time_ratio")?.goalBand == OrganizerGoals.hitchTimeRatio)
        #expect(ExplorerCatalog.metrics.filter { $0.goalBand != nil }.count == 3)
    }

    /// Names a catalog metric reads from the model (scalars and histograms).
    static var mappedNames: Set<String> {
        var names: Set<String> = []
        for metric in ExplorerCatalog.metrics {
            switch metric.source {
            case .scalar(let list): names.formUnion(list)
            case .histogram(let name): names.insert(name)
            default: break
            }
        }
        return names
    }

    @Test("every scalar, histogram and exit reason of every real fixture (both formats) maps to the catalog")
    func fixturesMap() throws {
        let files = try ExplorerFixtures.metricFiles
        #expect(files.count >= 4)
        var formats: Set<String> = []
        for file in files {
            let payload = try ExplorerFixtures.metric(file)
            formats.insert(payload.format.rawValue)
            let names =
                payload.scalars.map(\.name) + payload.histograms.map(\.name)
                + payload.stateEntries.flatMap { $0.histograms.map(\.name) }
            for name in names {
                #expect(
                    Self.mappedNames.contains(name) || ExplorerCatalog.auxiliaryReason(name) != nil,
                    "\(file): \(name) maps to no explorer metric")
            }
            let exits = payload.exits + payload.stateEntries.flatMap(\.exits)
            for exit in exits {
                #expect(
                    ExplorerCatalog.exitMetricId(exit.state, reason: exit.reason, perForegroundHour: false) != nil,
                    "\(file): exit \(exit.state) \(exit.reason) maps to no explorer metric")
            }
        }
        #expect(formats == ["legacy", "v2"])
    }

    @Test("every real fixture extracts: catalog ids only, valid samples, both formats' launch and hangs alike")
    func fixturesExtract() throws {
        for file in try ExplorerFixtures.metricFiles {
            let payload = try ExplorerFixtures.metric(file)
            let extraction = ExplorerExtractor.extract(payload)
            #expect(extraction.isDeviceDay == payload.isDeviceDay, "\(file)")
            for observation in extraction.observations {
                #expect(ExplorerCatalog.metric(observation.metric) != nil, "\(file): \(observation.metric)")
                #expect(ExplorerCell().merging(ExplorerCell([observation.sample])).deviceDays == 1, "\(file)")
            }
            if payload.isDeviceDay {
                let overall = Set(extraction.observations.filter { $0.appState == "all" }.map(\.metric))
                for id in ["launch.time_to_first_draw", "hang.hang_time", "hang.seconds_per_foreground_hour"]
                where payload.histograms.contains(where: { $0.name.hasSuffix("histogrammedAppHangTime") }) {
                    #expect(overall.contains(id), "\(file): \(id)")
                }
            }
        }
    }

    @Test("the legacy iOS 17 fixture gives its values in canonical units under the state all")
    func legacyValues() throws {
        let payload = try ExplorerFixtures.metric("metrics/lifeline-authored__ios17-full.json")
        let extraction = ExplorerExtractor.extract(payload)
        #expect(Set(extraction.observations.map(\.appState)) == ["all"])
        func sample(_ id: String) -> ExplorerSample? {
            extraction.observations.first { $0.metric == id }?.sample
        }
        #expect(sample("memory.peak") == .value(210_000_000))  // "210,000 kB", decimal kB
        #expect(sample("battery.cpu_time") == .value(310_000))  // "310 sec" in ms
        #expect(sample("battery.cpu_instructions") == .value(1_200_000_000))
        #expect(sample("disk.logical_writes") == .value(18_000_000))
        #expect(sample("animation.scroll_hitch_time_ratio") == .value(3))
        // Exits: per device-day every catalog reason (0 when absent); per foreground hour over 2,700 s.
        #expect(sample("termination.background.memory_pressure.per_device_day") == .value(7))
        #expect(sample("termination.foreground.app_watchdog.per_device_day") == .value(1))
        #expect(sample("termination.foreground.abnormal.per_device_day") == .value(0))
        #expect(
            sample("termination.background.memory_pressure.per_foreground_hour") == .rate(numerator: 7, hours: 0.75))
        #expect(
            extraction.exits.contains(
                ExplorerExit(appState: "all", state: .background, reason: "MemoryPressure", count: 7)))
        guard case .histogram(let launch) = sample("launch.time_to_first_draw") else {
            Issue.record("no launch histogram")
            return
        }
        #expect(launch.first == BucketDistribution.Bucket(start: 300, end: 400, count: 14))
        // Seconds hung: the hang histogram's midpoints × counts over 0.75 foreground hours.
        let hang = try #require(payload.histograms.first { $0.name.hasSuffix("histogrammedAppHangTime") })
        let seconds =
            hang.histogram.buckets.reduce(0.0) { $0 + (($1.start ?? 0) + ($1.end ?? 0)) / 2 * Double($1.count) } / 1000
        #expect(sample("hang.seconds_per_foreground_hour") == .rate(numerator: seconds, hours: 0.75))
    }

    @Test(
        "a 2.0.0 day report: states keyed domain/label, rates over the state's active time; a snapshot is no device-day"
    )
    func reportValues() throws {
        let snapshot = try ExplorerFixtures.metric("ios27/HitchScope__metric-20260913T053136.820.json")
        #expect(!snapshot.isDeviceDay)
        #expect(
            ExplorerExtractor.extract(snapshot) == ExplorerExtraction(isDeviceDay: false, observations: [], exits: []))
        let day = try ExplorerFixtures.metric("ios27/HitchScope__metric-20260913T053136.822.json")
        let extraction = ExplorerExtractor.extract(day)
        let states = Set(extraction.observations.map(\.appState))
        #expect(states.contains("all"))
        #expect(states.count > 1)
        for entry in day.stateEntries {
            let key = ExplorerExtractor.stateKey(entry.state)
            #expect(key.hasPrefix(entry.state.domain + "/" + entry.state.label))
            let metrics = Set(extraction.observations.filter { $0.appState == key }.map(\.metric))
            if entry.exits.isEmpty {
                #expect(!metrics.contains { $0.hasPrefix("termination.") }, "\(key)")
            }
        }
        func sample(_ id: String, _ state: String = "all") -> ExplorerSample? {
            extraction.observations.first { $0.metric == id && $0.appState == state }?.sample
        }
        #expect(sample("termination.foreground.memory_resource_limit.per_device_day") == .value(8))
        #expect(sample("termination.background.memory_pressure.per_device_day") == .value(1))
        // No successor in 2.0.0: absent counters are 0 exits, as in sparse legacy payloads.
        #expect(sample("termination.background.background_fetch_completion_timeout.per_device_day") == .value(0))
        #expect(sample("memory.peak") != nil && sample("battery.location_reduced_accuracy") != nil)
        #expect(sample("battery.cellular_condition") != nil)
        #expect(sample("launch.time_to_first_draw") != nil)
    }

    @Test("state keys carry the metadata only when there is some")
    func stateKeys() {
        #expect(ExplorerExtractor.stateKey(ReportedState(domain: "com.x.screen", label: "home")) == "com.x.screen/home")
        #expect(
            ExplorerExtractor.stateKey(
                ReportedState(domain: "com.x.screen", label: "home", metadata: #"{"tier":"pro"}"#))
                == #"com.x.screen/home {"tier":"pro"}"#)
    }

    @Test("a rate needs foreground hours; invalid values are skipped")
    func rateNeedsHours() {
        var payload = MetricPayload(begin: nil, end: nil, meta: DeviceMeta())
        payload.exits = [ExitCount(state: .foreground, reason: "BadAccess", count: 2)]
        payload.scalars = [
            ScalarMetric(
                name: "memoryMetrics.peakMemoryUsage", measurement: Measurement(value: -5, unit: .bytes, raw: "-5"))
        ]
        let ids = ExplorerExtractor.extract(payload).observations.map(\.metric)
        #expect(ids.contains("termination.foreground.bad_access.per_device_day"))
        #expect(!ids.contains("termination.foreground.bad_access.per_foreground_hour"))
        #expect(!ids.contains("memory.peak"))
        #expect(!ids.contains("hang.seconds_per_foreground_hour"))
    }
}
