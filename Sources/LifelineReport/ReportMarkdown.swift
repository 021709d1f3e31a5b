import Foundation
import LifelineAnalysis
import LifelineModel

/// The report as Markdown (GitHub tables): the same figures as the HTML, without charts.
package enum ReportMarkdown {
    package static func render(_ report: Report) -> String {
        var md = "# Lifeline report — \(esc(report.request.app))\n\n"
        md +=
            "Window \(report.request.days.from) – \(report.request.days.to) (\(report.request.days.dayCount) days, UTC)"
        if !report.request.versions.isEmpty {
            md += ", versions \(esc(report.request.versions.joined(separator: ", ")))"
        }
        md += ". Generated \(UTCTimestamp.iso8601(report.generatedAt)).\n\n## Summary\n\n"
        md += table(
            ["figure", "name", "value"],
            report.summary.map { [$0.figure.title, "`\($0.figure.name)`", $0.figure.display($0.value)] })
        if let pair = report.request.compare {
            md += "\n## Version \(esc(pair.base)) → \(esc(pair.target))\n\n"
            md += table(
                ["figure", esc(pair.base), esc(pair.target), "delta"],
                report.comparison.map { row in
                    let sign = (row.delta ?? 0) > 0 ? "+" : ""
                    return [
                        row.figure.title, row.figure.display(row.base), row.figure.display(row.target),
                        row.delta.map { sign + row.figure.display($0) } ?? "—",
                    ]
                })
        }
        if !report.gates.isEmpty {
            md += "\n## Release gates\n\n"
            md += table(
                ["condition", "value", "result"],
                report.gates.map {
                    [
                        "`\($0.condition.text)`", $0.value.map { NumberText.fixed($0, digits: 6) } ?? "no data",
                        $0.tripped ? "**FAIL**" : "pass",
                    ]
                })
        }
        md += "\n## Exits by version\n\n"
        md +=
            report.exits.isEmpty
            ? "_No metric payloads in scope._\n"
            : table(
                ["version", "state", "reason", "count", "per 1k device-days", "per hour"],
                report.exits.map {
                    [
                        esc($0.key.version ?? "—"), $0.state.rawValue, esc($0.reason), String($0.count),
                        $0.perThousandDeviceDays.map { NumberText.fixed($0, digits: 2) } ?? "—",
                        $0.perHour.map { NumberText.fixed($0, digits: 4) } ?? "—",
                    ]
                })
        if !report.exitsByAppState.isEmpty || !report.hangsByAppState.isEmpty {
            md += "\n## By app state (iOS 27 reports)\n\n"
            md += table(
                ["app state", "state", "reason", "count", "per 1k device-days"],
                report.exitsByAppState.map {
                    [
                        esc($0.key[.appState] ?? "—"), $0.state.rawValue, esc($0.reason), String($0.count),
                        $0.perThousandDeviceDays.map { NumberText.fixed($0, digits: 2) } ?? "—",
                    ]
                })
            md += "\n"
            md += table(
                ["app state", "hangs", "p50 ms", "p95 ms"],
                report.hangsByAppState.map {
                    [
                        esc($0.key[.appState] ?? "—"), String($0.samples),
                        $0.p50.map { NumberText.fixed($0, digits: 0) } ?? "—",
                        $0.p95.map { NumberText.fixed($0, digits: 0) } ?? "—",
                    ]
                })
        }
        md += "\n## Background-task expiration handlers\n\n"
        md +=
            report.handlers.isEmpty
            ? "_No expiration-handler signposts in scope._\n"
            : table(
                ["version", "handler", "entered", "exited", "imbalance", "ratio", "assertion timeouts", "flagged"],
                report.handlers.map {
                    [
                        esc($0.key.version ?? "—"), esc("\($0.category)/\($0.handler)"), String($0.entered),
                        String($0.exited),
                        String($0.imbalance),
                        $0.imbalanceRatio.map { NumberText.fixed($0 * 100, digits: 2) + " %" } ?? "—",
                        String($0.assertionTimeoutExits), $0.flagged ? "**flagged**" : "",
                    ]
                })
        md += "\n## State restoration\n\n"
        let restorationRows =
            report.restorationByVersion.map { ("version " + ($0.key.version ?? "—"), $0) }
            + report.restorationByDay.map { ("day " + ($0.key.day ?? "—"), $0) }
        md +=
            restorationRows.isEmpty
            ? "_No state-restoration signposts in scope._\n"
            : table(
                ["group", "attempts", "failures", "error rate", "p50", "p95"],
                restorationRows.map { label, row in
                    [
                        esc(label), String(row.attempts), String(row.failures),
                        row.errorRate.map { NumberText.fixed($0 * 100, digits: 3) + " %" } ?? "—",
                        ReportHTML.ms(row.p50Milliseconds), ReportHTML.ms(row.p95Milliseconds),
                    ]
                })
        md += "\n## Top crash groups (\(report.crashes.count) of \(report.crashGroupCount))\n\n"
        if report.crashes.isEmpty { md += "_No diagnostics in scope._\n" }
        for crash in report.crashes {
            let decoded = [crash.exceptionName, crash.signalName].compactMap { $0 }.joined(separator: " / ")
            md +=
                "### #\(crash.group.id) \(esc(crash.group.title))\(crash.isWatchdog ? " — watchdog 0x8BADF00D" : "")\n\n"
            md += "\(crash.kind.rawValue), \(crash.count) occurrences (\(esc(Stack.versions(crash.countByVersion))))"
            md += decoded.isEmpty ? "" : ", \(esc(decoded))"
            md +=
                "; first seen \(UTCTimestamp.iso8601(crash.group.firstSeen)), last \(UTCTimestamp.iso8601(crash.group.lastSeen))\n\n"
            md += fenced(Stack.text(crash.group))
        }
        if !report.missingSymbols.isEmpty {
            md += "\n### Missing symbols\n\nThe app's binaries seen in diagnostics with no dSYM uploaded:\n\n"
            md += table(
                ["binary", "UUID", "diagnostics"],
                report.missingSymbols.map { [esc($0.binaryName ?? "—"), "`\($0.uuid)`", String($0.diagnostics)] })
        }
        md += "\n## Launch and hang percentiles\n\n"
        let percentileRows =
            report.launch.flatMap { series in series.rows.map { (series.name, $0) } }
            + report.hangs.map { (Analyzer.hangHistogramName, $0) }
        md +=
            percentileRows.isEmpty
            ? "_No launch or hang histograms in scope._\n"
            : table(
                ["histogram", "version", "samples", "p50", "p90", "p95", "p99"],
                percentileRows.map { name, row in
                    [
                        esc(name), esc(row.key.version ?? "—"), String(row.samples), ReportHTML.ms(row.p50),
                        ReportHTML.ms(row.p90),
                        ReportHTML.ms(row.p95), ReportHTML.ms(row.p99),
                    ]
                })
        md += ReportExplorer.markdown(report)
        md += "\n## Alerts fired in the window\n\n"
        md +=
            report.alerts.isEmpty
            ? "_None._\n"
            : table(
                ["rule", "status", "fired", "resolved", "value when fired"],
                report.alerts.map {
                    [
                        $0.rule, $0.status, UTCTimestamp.iso8601($0.firedAt),
                        $0.resolvedAt.map(UTCTimestamp.iso8601) ?? "—",
                        $0.value.map { NumberText.fixed($0, digits: 4) } ?? "—",
                    ]
                })
        return md
    }

    /// Text from a payload or a config as inert Markdown: every character that can open code,
    /// emphasis, a link or image, an HTML tag or entity, or a table cell is backslash-escaped, and
    /// line breaks and control characters become spaces. (`.`, `-` and `+` only matter at the start
    /// of a line, where escaped text never stands.)
    package static func esc(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n", "\r", "\u{2028}", "\u{2029}": out.append(" ")
            case "\\", "`", "*", "_", "{", "}", "[", "]", "(", ")", "#", "!", "|", "<", ">", "~", "&":
                out.append("\\")
                out.unicodeScalars.append(scalar)
            case _ where scalar.properties.generalCategory == .control: out.append(" ")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` in a fenced code block whose fence is longer than any run of backticks inside it,
    /// so the text cannot close the block.
    package static func fenced(_ text: String) -> String {
        var longest = 0
        var run = 0
        for character in text {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: max(3, longest + 1))
        return fence + "\n" + text + "\n" + fence + "\n\n"
    }

    /// A GitHub table; a `|` in a cell not already escaped by ``esc(_:)`` is escaped.
    package static func table(_ header: [String], _ rows: [[String]]) -> String {
        func cell(_ text: String) -> String {
            var out = ""
            var previous: Character?
            for character in text {
                if character == "|" && previous != "\\" { out.append("\\") }
                out.append(character)
                previous = character
            }
            return out
        }
        func line(_ cells: [String]) -> String {
            "| " + cells.map(cell).joined(separator: " | ") + " |\n"
        }
        return line(header) + line(header.map { _ in "---" }) + rows.map(line).joined()
    }
}
