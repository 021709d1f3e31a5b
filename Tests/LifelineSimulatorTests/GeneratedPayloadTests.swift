import Foundation
import LifelineModel
@testable import LifelineSimulator
import LifelineTestSupport
import Testing

@Suite("Generated payloads")
struct GeneratedPayloadTests {
    @Test("the same seed gives identical payload bytes, another seed different ones")
    func sameSeedSameBytes() throws {
        let config = testConfig(devices: 15, days: 4, scenario: .crashSpike, versions: ["4.0.0", "4.1.0", "4.2.0"])
        let first = allPayloads(try Simulation(config))
        let second = allPayloads(try Simulation(config))
        #expect(first.count == second.count)
        #expect(first == second)
        #expect(
            first.map { Array(gzipPayload($0.json).readableBytesView) }
                == second.map { Array(gzipPayload($0.json).readableBytesView) })
        var other = config
        other.seed = 8
        let third = allPayloads(try Simulation(other))
        #expect(first.map(\.json) != third.map(\.json))
        // Keys depend on (seed, options, device, day, kind) only, and are unique within a run.
        #expect(Set(first.map(\.idempotencyKey)).count == first.count)
        #expect(Set(first.map(\.idempotencyKey)).isDisjoint(with: third.map(\.idempotencyKey)))
    }

    @Test("any device-day can be generated alone, in any order, with the same bytes")
    func deviceDaysAreIndependent() throws {
        let simulation = try Simulation(testConfig(devices: 10, days: 3))
        let inOrder = (0..<30).map { simulation.deviceDay(at: $0).payloads }
        let reversed = (0..<30).reversed().map { simulation.deviceDay(at: $0).payloads }
        #expect(inOrder == reversed.reversed())
    }

    @Test(
        "every payload of every scenario decodes, with every measurement parsed",
        arguments: Scenario.allCases)
    func everyPayloadDecodes(scenario: Scenario) throws {
        let simulation = try Simulation(testConfig(devices: 100, days: 3, scenario: scenario))
        var kinds: Set<DiagnosticKind> = []
        var locales: Set<String> = []
        var exitCount: Int64 = 0
        for payload in allPayloads(simulation) {
            let document = try decode(payload)
            #expect(document.unparsedMeasurements == 0, "\(payload.fileName)")
            #expect(document.droppedValues == 0, "\(payload.fileName)")
            #expect(document.bundleIdentifier == nil || document.bundleIdentifier == "com.example.notes")
            switch document.content {
            case .metric(let metric):
                #expect(payload.kind == .metric)
                #expect(metric.begin?.epochSeconds != nil)
                #expect(metric.meta.appVersion != nil)
                exitCount += metric.exits.reduce(0) { $0 + $1.count }
                locales.insert(metric.meta.regionFormat ?? "")
            case .diagnostic(let diagnostics):
                #expect(payload.kind == .diagnostic)
                #expect(!diagnostics.diagnostics.isEmpty)
                for diagnostic in diagnostics.diagnostics {
                    kinds.insert(diagnostic.kind)
                    let tree = try #require(diagnostic.callStackTree)
                    if tree.callStackPerThread {
                        #expect(tree.callStacks.filter { $0.threadAttributed == true }.count == 1)
                    } else {
                        #expect(tree.callStacks.allSatisfy { $0.threadAttributed == nil })
                        #expect(tree.callStacks.flatMap(\.frames).contains { ($0.frame.sampleCount ?? 0) > 1 })
                    }
                    if diagnostic.kind != .crash { #expect(diagnostic.primaryMeasurement?.value != nil) }
                }
            }
        }
        #expect(kinds.contains(.crash) && kinds.contains(.hang))
        #expect(exitCount > 300)
        #expect(locales.isSuperset(of: ["US", "CN", "DE", "FR"]))
    }

    @Test("--format: v1 sends legacy payloads only, v2 iOS 27 reports with app states, mixed both")
    func formats() throws {
        for (format, expected) in [
            (PayloadFormatChoice.v1, Set([PayloadFormat.legacy])), (.v2, [.v2]), (.mixed, [.legacy, .v2]),
        ] {
            var config = testConfig(devices: 20, days: 2, scenario: .expirationHang)
            config.format = format
            let simulation = try Simulation(config)
            var formats: Set<PayloadFormat> = []
            var handlerSignposts = 0
            for payload in allPayloads(simulation) where payload.kind == .metric {
                let document = try decode(payload)
                #expect(document.unparsedMeasurements == 0 && document.droppedValues == 0, "\(payload.fileName)")
                guard case .metric(let metric) = document.content else { continue }
                formats.insert(metric.format)
                if metric.format == .v2 {
                    #expect(metric.isDeviceDay)
                    #expect(metric.stateEntries.contains { $0.state.domain == "com.example.experiment.sync" })
                    #expect(metric.meta.osVersion?.hasPrefix("iPhone OS 1") == true)
                    handlerSignposts += metric.signposts.filter { $0.category == "ExpirationHandlers" }.count
                }
            }
            #expect(formats == expected, "\(format)")
            #expect((handlerSignposts > 0) == expected.contains(.v2), "\(format)")
        }
    }

    @Test("locale-formatted values land on the same canonical numbers as English")
    func localesAgree() throws {
        let simulation = try Simulation(testConfig(devices: 40, days: 2, scenario: .watchdogSpike))
        var compared = 0
        for n in 0..<simulation.deviceDayCount {
            let device = n % 40
            let day = n / 40
            let english = simulation.deviceDay(device: device, day: day, locale: .english).payloads
            let englishDocs = try english.map(decode)
            for locale in DeviceLocale.allCases where locale != .english {
                let localized = simulation.deviceDay(device: device, day: day, locale: locale).payloads
                #expect(localized.count == english.count)
                for (payload, reference) in zip(localized, englishDocs) {
                    let document = try decode(payload)
                    #expect(document.unparsedMeasurements == 0)
                    switch (document.content, reference.content) {
                    case (.metric(let m), .metric(let r)):
                        #expect(m.scalars.map(\.measurement.value) == r.scalars.map(\.measurement.value))
                        #expect(m.scalars.map(\.measurement.unit) == r.scalars.map(\.measurement.unit))
                        #expect(m.histograms == r.histograms)
                        #expect(m.signposts.map(\.durations) == r.signposts.map(\.durations))
                        #expect(
                            m.signposts.map(\.cumulativeCPUTime?.value) == r.signposts.map(\.cumulativeCPUTime?.value))
                        compared += 1
                    case (.diagnostic(let d), .diagnostic(let r)):
                        #expect(
                            d.diagnostics.map(\.primaryMeasurement?.value)
                                == r.diagnostics.map(\.primaryMeasurement?.value))
                        #expect(d.diagnostics.map(\.signature) == r.diagnostics.map(\.signature))
                        compared += 1
                    default:
                        Issue.record("payload kinds differ between locales")
                    }
                }
            }
        }
        #expect(compared > 300)
    }

    @Test("measurement strings are written as real devices write them")
    func measurementStrings() {
        #expect(DeviceLocale.english.measurement(1234, .milliseconds) == "1,234 ms")
        #expect(DeviceLocale.chinese.measurement(1530, .milliseconds) == "1,530毫秒")
        #expect(DeviceLocale.chinese.measurement(2717, .seconds) == "2,717秒")
        #expect(DeviceLocale.chinese.measurement(1_106_818, .kilobytes) == "1,106,818千字节")
        #expect(DeviceLocale.chinese.measurement(12, .bars) == "12 bars")
        #expect(DeviceLocale.german.measurement(1234, .milliseconds) == "1.234 ms")
        #expect(DeviceLocale.french.measurement(1234, .milliseconds) == "1\u{202F}234 ms")
        #expect(DeviceLocale.englishPlain.measurement(200_000, .kilobytes) == "200000 kB")
        for locale in DeviceLocale.allCases {
            for unit in SimUnit.allCases {
                for value: Int64 in [0, 7, 999, 1000, 1234, 65_536, 1_106_818, 1_073_741_824] {
                    let parsed = Measurement.parse(locale.measurement(value, unit))
                    #expect(parsed.value == Double(value) * unit.canonicalFactor, "\(locale) \(unit) \(value)")
                }
            }
        }
    }

    @Test("crash stacks are deep where they should be, and signatures group by the app's frames")
    func crashStacks() throws {
        let config = testConfig(devices: 1, days: 1)
        let images = Images(app: .app("notes", version: "4.2.0", bundle: "com.example.notes"), osBuild: "22B83")
        let simulation = try Simulation(config)
        let context = DiagnosticContext(
            device: simulation.devices[0], version: "4.2.0", build: "1237", bundleIdentifier: "com.example.notes",
            images: images, pid: 411, lowPower: false)
        var rng = SplitMix64(seed: 3)
        var events = DiagnosticEvents()
        events.crashes = SimulatedCrash.allCases
        let json = DiagnosticBuilder.payload(
            events: events, context: context, begin: "2026-10-01 00:00:00 +0000", end: "2026-10-01 23:59:00 +0000",
            rng: &rng)
        let document = try #require(try MetricKitDecoder.decode(json, family: .diagnostic).first)
        guard case .diagnostic(let payload) = document.content else { throw TestFailure("not a diagnostic") }
        #expect(payload.diagnostics.count == SimulatedCrash.allCases.count)
        let fingerprints = Set(payload.diagnostics.map(\.signature.fingerprint))
        #expect(fingerprints.count == SimulatedCrash.allCases.count)
        for (crash, diagnostic) in zip(SimulatedCrash.allCases, payload.diagnostics) {
            let chain = try #require(diagnostic.callStackTree?.attributedChain)
            #expect(chain.last?.binaryName == "dyld" || chain.last?.binaryName == "libsystem_pthread.dylib")
            #expect(chain.contains { $0.binaryName == "notes" && $0.address < 0x1_8000_0000 })
            #expect(chain.filter { $0.binaryName != "notes" }.allSatisfy { $0.address >= 0x1_8000_0000 })
            if crash == .stackOverflow { #expect(chain.count > 80) }
            #expect(diagnostic.signature.groupKind == (crash.isWatchdog ? "watchdog" : "crash"))
        }
    }

    @Test("expiration-hang: the version's handler enters more often than it exits, and its timeouts rise")
    func expirationHang() throws {
        let simulation = try Simulation(testConfig(devices: 80, days: 7, scenario: .expirationHang))
        var entered: [String: Int64] = [:]
        var exited: [String: Int64] = [:]
        var timeouts: [String: Int64] = [:]
        var deviceDays: [String: Int] = [:]
        for payload in allPayloads(simulation) where payload.kind == .metric {
            guard case .metric(let metric) = try decode(payload).content else { continue }
            let version = try #require(metric.meta.appVersion)
            deviceDays[version, default: 0] += 1
            for signpost in metric.signposts where signpost.category == "ExpirationHandlers" {
                if signpost.name == "BackgroundSyncExpirationHandlerEntered" {
                    entered[version, default: 0] += signpost.totalCount
                }
                if signpost.name == "BackgroundSyncExpirationHandlerExited" {
                    exited[version, default: 0] += signpost.totalCount
                }
            }
            for exit in metric.exits where exit.state == .background && exit.reason == "BackgroundTaskAssertionTimeout"
            {
                timeouts[version, default: 0] += exit.count
            }
        }
        let old = "4.1.0"
        let new = "4.2.0"
        #expect((deviceDays[new] ?? 0) > 50)
        #expect(entered[new, default: 0] > exited[new, default: 0] + 20)
        #expect(entered[old, default: 0] == exited[old, default: 0])
        #expect(entered[old, default: 0] > 0)
        let newRate = Double(timeouts[new, default: 0]) / Double(deviceDays[new] ?? 1)
        let oldRate = Double(timeouts[old, default: 0]) / Double(deviceDays[old] ?? 1)
        #expect(newRate > 10 * max(oldRate, 0.01))
    }
}
