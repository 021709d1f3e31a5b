import Foundation
import LifelineAnalysis
import LifelineModel

/// The report as JSON (snake_case keys, the HTTP API's field names; a figure that cannot be
/// computed is `null`).
package enum ReportJSON {
    package static func render(_ report: Report) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(Body(report)), as: UTF8.self) + "\n"
    }

    struct Body: Encodable {
        struct Window: Encodable {
            var from: String
            var to: String
            var days: Int
        }
        struct Figure: Encodable {
            var name: String
            var title: String
            var value: Double?
        }
        struct Comparison: Encodable {
            var base: String
            var target: String
            var figures: [Row]
            struct Row: Encodable {
                var name: String
                var base: Double?
                var target: Double?
                var delta: Double?
            }
        }
        struct Gate: Encodable {
            var condition: String
            var value: Double?
            var tripped: Bool
        }
        struct Exit: Encodable {
            var version: String?
            var state: String
            var reason: String
            var count: Int64
            var deviceDays: Int64
            var per1000DeviceDays: Double?
            var perHour: Double?
            enum CodingKeys: String, CodingKey {
                case version, state, reason, count, deviceDays, perHour
                case per1000DeviceDays = "per_1000_device_days"
            }
        }
        struct Handler: Encodable {
            var version: String?
            var category: String
            var handler: String
            var entered: Int64
            var exited: Int64
            var imbalance: Int64
            var imbalanceRatio: Double?
            var flagged: Bool
            var assertionTimeoutExits: Int64
        }
        struct Restoration: Encodable {
            var version: String?
            var day: String?
            var attempts: Int64
            var failures: Int64
            var errorRate: Double?
            var p50Ms: Double?
            var p95Ms: Double?
            var durationSamples: Int64
        }
        struct Crash: Encodable {
            var groupId: Int64
            var fingerprint: String
            var kind: String
            var title: String
            var count: Int64
            var countByVersion: [String: Int64]
            var exceptionName: String?
            var signalName: String?
            var watchdog: Bool
            var firstSeen: String
            var lastSeen: String
            var sampleStack: [Frame]
            struct Frame: Encodable {
                var binary: String?
                var address: String
                var offset: UInt64
            }
        }
        struct Percentiles: Encodable {
            var histogram: String
            var version: String?
            var samples: Int64
            var p50: Double?
            var p90: Double?
            var p95: Double?
            var p99: Double?
        }
        struct Alert: Encodable {
            var rule: String
            var labels: [String: String]
            var status: String
            var firedAt: String
            var resolvedAt: String?
            var value: Double?
        }

        var app: String
        var window: Window
        var versions: [String]
        var generatedAt: String
        var summary: [Figure]
        var comparison: Comparison?
        var gates: [Gate]
        var failed: Bool
        var exits: [Exit]
        var expirationHandlers: [Handler]
        var restorationByVersion: [Restoration]
        var restorationByDay: [Restoration]
        var crashGroups: Int
        var topCrashes: [Crash]
        var percentiles: [Percentiles]
        var alerts: [Alert]

        init(_ report: Report) {
            app = report.request.app
            window = Window(
                from: report.request.days.from, to: report.request.days.to, days: report.request.days.dayCount)
            versions = report.versions
            generatedAt = Timestamps.iso(report.generatedAt)
            summary = report.summary.map { Figure(name: $0.figure.name, title: $0.figure.title, value: $0.value) }
            comparison = report.request.compare.map { pair in
                Comparison(
                    base: pair.base, target: pair.target,
                    figures: report.comparison.map {
                        Comparison.Row(name: $0.figure.name, base: $0.base, target: $0.target, delta: $0.delta)
                    })
            }
            gates = report.gates.map { Gate(condition: $0.condition.text, value: $0.value, tripped: $0.tripped) }
            failed = report.failed
            exits = report.exits.map {
                Exit(
                    version: $0.key.version, state: $0.state.rawValue, reason: $0.reason, count: $0.count,
                    deviceDays: $0.deviceDays, per1000DeviceDays: $0.perThousandDeviceDays, perHour: $0.perHour)
            }
            expirationHandlers = report.handlers.map {
                Handler(
                    version: $0.key.version, category: $0.category, handler: $0.handler, entered: $0.entered,
                    exited: $0.exited, imbalance: $0.imbalance, imbalanceRatio: $0.imbalanceRatio, flagged: $0.flagged,
                    assertionTimeoutExits: $0.assertionTimeoutExits)
            }
            func restoration(_ row: RestorationFigure) -> Restoration {
                Restoration(
                    version: row.key.version, day: row.key.day, attempts: row.attempts, failures: row.failures,
                    errorRate: row.errorRate, p50Ms: row.p50Milliseconds, p95Ms: row.p95Milliseconds,
                    durationSamples: row.durationSamples)
            }
            restorationByVersion = report.restorationByVersion.map(restoration)
            restorationByDay = report.restorationByDay.map(restoration)
            crashGroups = report.crashGroupCount
            topCrashes = report.crashes.map { crash in
                Crash(
                    groupId: crash.group.id, fingerprint: crash.group.fingerprint, kind: crash.kind.rawValue,
                    title: crash.group.title, count: crash.count, countByVersion: crash.countByVersion,
                    exceptionName: crash.exceptionName, signalName: crash.signalName, watchdog: crash.isWatchdog,
                    firstSeen: Timestamps.iso(crash.group.firstSeen), lastSeen: Timestamps.iso(crash.group.lastSeen),
                    sampleStack: crash.group.sampleFrames.map {
                        Crash.Frame(
                            binary: $0.binaryName, address: "0x" + String($0.address, radix: 16), offset: $0.offset)
                    })
            }
            percentiles =
                report.launch.flatMap { series in
                    series.rows.map { Self.percentiles(series.name, $0) }
                } + report.hangs.map { Self.percentiles("hang_time", $0) }
            alerts = report.alerts.map {
                Alert(
                    rule: $0.rule, labels: $0.labels, status: $0.status, firedAt: Timestamps.iso($0.firedAt),
                    resolvedAt: $0.resolvedAt.map(Timestamps.iso), value: $0.value)
            }
        }

        static func percentiles(_ name: String, _ row: PercentileFigure) -> Percentiles {
            Percentiles(
                histogram: name, version: row.key.version, samples: row.samples, p50: row.p50, p90: row.p90,
                p95: row.p95, p99: row.p99)
        }
    }
}
