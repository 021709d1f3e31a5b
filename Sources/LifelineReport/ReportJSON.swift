import Foundation
import LifelineAnalysis
import LifelineModel

/// The report as JSON. Figure rows are the HTTP API's rows (``FigureJSON``): same names, same
/// values, `null` for a figure that cannot be computed (never a missing key).
package enum ReportJSON {
    package static func render(_ report: Report) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(Body(report)), as: UTF8.self) + "\n"
    }

    typealias Key = FigureJSON.DynamicKey

    struct Body: Encodable {
        var report: Report
        init(_ report: Report) { self.report = report }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(report.request.app, forKey: "app")
            try c.encode(FigureJSON.Window(report.request.days), forKey: "window")
            try c.encode(report.versions, forKey: "versions")
            try c.encode(UTCTimestamp.iso8601(report.generatedAt), forKey: "generated_at")
            try c.encode(report.summary.map(Figure.init), forKey: "summary")
            if let pair = report.request.compare {
                try c.encode(Comparison(pair: pair, rows: report.comparison), forKey: "comparison")
            } else {
                try c.encodeNil(forKey: "comparison")
            }
            try c.encode(report.gates.map(Gate.init), forKey: "gates")
            try c.encode(report.failed, forKey: "failed")
            try c.encode(report.exits.map(FigureJSON.ExitRow.init), forKey: "exits")
            try c.encode(report.handlers.map(FigureJSON.HandlerRow.init), forKey: "expiration_handlers")
            try c.encode(
                report.restorationByVersion.map(FigureJSON.RestorationRow.init), forKey: "restoration_by_version")
            try c.encode(report.restorationByDay.map(FigureJSON.RestorationRow.init), forKey: "restoration_by_day")
            try c.encode(report.crashGroupCount, forKey: "crash_groups")
            try c.encode(
                report.crashes.map { FigureJSON.CrashRow(figure: $0, withStack: true) }, forKey: "top_crashes")
            try c.encode(report.missingSymbols.map(MissingRow.init), forKey: "missing_symbols")
            let percentiles =
                report.launch.flatMap { series in
                    series.rows.map { FigureJSON.PercentileRow(name: series.name, figure: $0) }
                } + report.hangs.map { FigureJSON.PercentileRow(name: Analyzer.hangHistogramName, figure: $0) }
            try c.encode(percentiles, forKey: "percentiles")
            try c.encode(report.exitsByAppState.map(FigureJSON.ExitRow.init), forKey: "exits_by_app_state")
            try c.encode(
                report.hangsByAppState.map { FigureJSON.PercentileRow(name: Analyzer.hangHistogramName, figure: $0) },
                forKey: "hangs_by_app_state")
            try c.encode(report.explorer, forKey: "metrics")
            try c.encode(InsightsBody(report.request.scope, report.insights), forKey: "insights")
            try c.encode(report.terminations, forKey: "terminations")
            try c.encode(report.alerts.map(Alert.init), forKey: "alerts")
        }
    }

    struct Figure: Encodable {
        var value: Report.FigureValue
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(value.figure.name, forKey: "name")
            try c.encode(value.figure.title, forKey: "title")
            try c.encode(value.value, forKey: "value")
        }
    }

    struct Comparison: Encodable {
        var pair: Report.VersionPair
        var rows: [Report.ComparisonRow]
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(pair.base, forKey: "base")
            try c.encode(pair.target, forKey: "target")
            try c.encode(rows.map(Row.init), forKey: "figures")
        }
        struct Row: Encodable {
            var row: Report.ComparisonRow
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Key.self)
                try c.encode(row.figure.name, forKey: "name")
                try c.encode(row.base, forKey: "base")
                try c.encode(row.target, forKey: "target")
                try c.encode(row.delta, forKey: "delta")
            }
        }
    }

    struct Gate: Encodable {
        var result: Report.GateResult
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(result.condition.text, forKey: "condition")
            try c.encode(result.value, forKey: "value")
            try c.encode(result.tripped, forKey: "tripped")
        }
    }

    struct MissingRow: Encodable {
        var row: MissingSymbols
        init(_ row: MissingSymbols) { self.row = row }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(row.uuid, forKey: "uuid")
            try c.encode(row.binaryName, forKey: "binary_name")
            try c.encode(row.diagnostics, forKey: "diagnostics")
        }
    }

    struct Alert: Encodable {
        var alert: Report.FiredAlert
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(alert.rule, forKey: "rule")
            try c.encode(alert.labels, forKey: "labels")
            try c.encode(alert.status, forKey: "status")
            try c.encode(UTCTimestamp.iso8601(alert.firedAt), forKey: "fired_at")
            try c.encode(alert.resolvedAt.map(UTCTimestamp.iso8601), forKey: "resolved_at")
            try c.encode(alert.value, forKey: "value")
        }
    }
}
