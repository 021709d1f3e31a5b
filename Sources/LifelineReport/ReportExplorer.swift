import Foundation
import LifelineAnalysis
import LifelineModel

/// The report's metrics-explorer sections (issue 26): Insights, one section per category, and the
/// explained and unexplained terminations, in HTML (with a chart per metric across versions, also
/// the dashboard's metrics page) and Markdown. Rows with insufficient data are left out; a
/// termination metric without any exit is left out.
package enum ReportExplorer {
    /// A figure in its unit, for a table cell.
    static func text(_ value: Double?, _ unit: ExplorerUnit) -> String {
        guard let value else { return "—" }
        switch unit {
        case .milliseconds: return NumberText.fixed(value, digits: 0) + " ms"
        case .bytes: return NumberText.fixed(value / 1_000_000, digits: 1) + " MB"
        case .instructions: return NumberText.fixed(value / 1_000_000, digits: 1) + " M"
        case .millisecondsPerSecond: return NumberText.fixed(value, digits: 2) + " ms/s"
        case .secondsPerHour: return NumberText.fixed(value, digits: 2) + " s/h"
        case .exitsPerDeviceDay: return NumberText.fixed(value, digits: 4)
        case .exitsPerHour: return NumberText.fixed(value, digits: 4) + " /h"
        default: return NumberText.fixed(value, digits: 2) + " " + unit.rawValue
        }
    }

    /// The rows worth showing of one category, by metric (catalog order) then series.
    static func shown(_ report: Report, _ category: ExplorerCategory) -> [(title: String, rows: [ExplorerRow])] {
        let rows = report.explorer.filter {
            $0.category == category && !$0.insufficientData && (category != .termination || ($0.mean ?? 0) > 0)
        }
        var series: [(title: String, rows: [ExplorerRow])] = []
        for metric in ExplorerCatalog.metrics(in: category) {
            let ofMetric = rows.filter { $0.metric == metric.id }
            for subject in Array(Set(ofMetric.map { $0.subject ?? "" })).sorted() {
                let title = subject.isEmpty ? metric.title : "\(metric.title) — \(subject)"
                series.append((title, ofMetric.filter { ($0.subject ?? "") == subject }))
            }
        }
        return series
    }

    static func insightLine(_ entry: InsightsAnswer.Entry) -> [String] {
        let insight = entry.insight
        let interval = insight.confidenceInterval.map {
            "[\(NumberText.fixed($0.lower, digits: 1)), \(NumberText.fixed($0.upper, digits: 1))] %"
        }
        return [
            entry.metric.title + (entry.subject.isEmpty ? "" : " — \(entry.subject)"),
            "p\(Int((insight.percentile * 100).rounded()))", text(insight.latestValue, entry.metric.unit),
            text(insight.referenceValue, entry.metric.unit),
            insight.deltaPercentage.map { (($0 > 0) ? "+" : "") + NumberText.fixed($0, digits: 1) + " %" } ?? "—",
            interval ?? "—", insight.classification.rawValue + (insight.highImpact ? ", high impact" : ""),
        ]
    }

    static func reported(_ report: Report) -> [InsightsAnswer.Entry] {
        report.insights.entries.filter { $0.insight.classification == .regression }
            + report.insights.entries.filter { $0.insight.classification == .trendingUp }
    }

    static let insightHeader = ["metric", "percentile", "latest", "reference", "delta", "95 % interval", "insight"]
    static let rowHeader = ["version", "p50", "p90", "mean ± 95 %", "device-days", "goal"]

    static func rowCells(_ row: ExplorerRow) -> [String] {
        let mean = text(row.mean, row.unit) + (row.errorMargin.map { " ± " + text($0, row.unit) } ?? "")
        return [
            row.version ?? "—", text(row.p50, row.unit), text(row.p90, row.unit), mean,
            NumberText.grouped(Double(row.deviceDays)), row.goal?.rawValue ?? "—",
        ]
    }

    static func versionsNote(_ report: Report) -> String {
        guard let latest = report.insights.latest else { return "No version in the window." }
        let references = report.insights.references
        return references.isEmpty
            ? "\(latest) has no earlier version to compare with."
            : "\(latest) against the mean of \(references.joined(separator: ", ")) (bootstrap over device-days)."
    }

    // MARK: Markdown

    package static func markdown(_ report: Report) -> String {
        let esc = ReportMarkdown.esc
        var md = "\n## Insights\n\n\(esc(versionsNote(report)))\n\n"
        let entries = reported(report)
        md +=
            entries.isEmpty
            ? "_No regression and nothing trending up._\n"
            : ReportMarkdown.table(insightHeader, entries.map { insightLine($0).map(esc) })
        for category in ExplorerCategory.allCases {
            md += "\n## \(title(category))\n\n"
            let series = shown(report, category)
            if series.isEmpty { md += "_Not enough device-days in scope._\n" }
            for (name, rows) in series {
                md += "\n**\(esc(name))**\n\n" + ReportMarkdown.table(rowHeader, rows.map { rowCells($0).map(esc) })
            }
        }
        md += "\n## Terminations: explained and unexplained\n\n"
        md +=
            report.terminations.isEmpty
            ? "_No exits in scope._\n"
            : ReportMarkdown.table(
                ["version", "reason", "exits", "diagnostics", "explained", "unexplained"],
                report.terminations.map {
                    [
                        esc($0.version), esc($0.reason), String($0.exits), String($0.diagnostics), String($0.explained),
                        String($0.unexplained),
                    ]
                })
        return md
    }

    static func title(_ category: ExplorerCategory) -> String {
        switch category {
        case .launch: "Launch"
        case .hang: "Hangs"
        case .memory: "Memory"
        case .disk: "Disk writes"
        case .battery: "Battery"
        case .animation: "Animation hitches"
        case .termination: "Terminations per device-day and per hour"
        }
    }

    // MARK: HTML

    /// Insights, one section per category with a chart per metric, and the terminations.
    package static func html(_ report: Report) -> String {
        var html = "<h2>Insights</h2><p class=\"meta\">\(HTML.escape(versionsNote(report)))</p>"
        let entries = reported(report)
        if entries.isEmpty {
            html += "<p class=\"empty\">No regression and nothing trending up.</p>"
        } else {
            html += table(insightHeader, entries.map(insightLine)) { index in
                entries[index].insight.classification == .regression ? "flagged" : nil
            }
        }
        for category in ExplorerCategory.allCases {
            html += "<h2>\(HTML.escape(title(category)))</h2>"
            let series = shown(report, category)
            if series.isEmpty { html += "<p class=\"empty\">Not enough device-days in scope.</p>" }
            for (name, rows) in series {
                let versions = rows.compactMap(\.version)
                let unit = rows.first.map { $0.unit.rawValue } ?? ""
                html += SVGChart.lines(
                    title: name, xLabels: versions,
                    series: [
                        SVGChart.Series(name: "p50", values: rows.map(\.p50)),
                        SVGChart.Series(name: "p90", values: rows.map(\.p90)),
                    ], unit: unit, height: 200)
                html += "<details><summary>\(HTML.escape(name)): figures</summary>"
                html += table(rowHeader, rows.map(rowCells)) { _ in nil } + "</details>"
            }
        }
        html += "<h2>Terminations: explained and unexplained</h2>"
        guard !report.terminations.isEmpty else { return html + "<p class=\"empty\">No exits in scope.</p>" }
        return html
            + table(
                ["version", "reason", "exits", "diagnostics", "explained", "unexplained"],
                report.terminations.map {
                    [
                        $0.version, $0.reason, String($0.exits), String($0.diagnostics), String($0.explained),
                        String($0.unexplained),
                    ]
                }
            ) { _ in nil }
    }

    /// A table of escaped cells (every cell but the first right-aligned); `css` names a row's class.
    static func table(_ header: [String], _ rows: [[String]], css: (Int) -> String?) -> String {
        var html = "<table><tr>"
        for (index, name) in header.enumerated() {
            html += "<th\(index == 0 ? "" : " class=\"n\"")>\(HTML.escape(name))</th>"
        }
        html += "</tr>"
        for (number, row) in rows.enumerated() {
            html += "<tr\(css(number).map { " class=\"\($0)\"" } ?? "")>"
            for (index, cell) in row.enumerated() {
                html += "<td\(index == 0 ? "" : " class=\"n\"")>\(HTML.escape(cell))</td>"
            }
            html += "</tr>"
        }
        return html + "</table>"
    }
}
