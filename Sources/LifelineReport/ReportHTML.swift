import Foundation
import LifelineAnalysis
import LifelineModel

/// The report as one self-contained HTML file: inline CSS and SVG, no script, no network.
/// ``sections(_:)`` is also what the dashboard page shows, live.
package enum ReportHTML {
    /// A whole document.
    package static func document(_ report: Report) -> String {
        let title = "Lifeline report — \(report.request.app)"
        return page(title: title, body: header(report) + sections(report) + ReportExplorer.html(report))
    }

    /// A complete page around `body` with the report's stylesheet.
    package static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>\(stylesheet)</style></head>
        <body>\(body)</body></html>

        """
    }

    static let stylesheet = """
        body{font:14px/1.45 -apple-system,system-ui,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;\
        padding:16px 24px;color:#222;background:#fff}
        h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;\
        padding-bottom:4px}.meta{color:#666;margin:0 0 12px}
        table{border-collapse:collapse;margin:6px 0 12px;width:100%}th,td{padding:3px 8px;text-align:left;\
        border-bottom:1px solid #eee;vertical-align:top}th{background:#f6f6f6;font-weight:600}
        td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
        tr.flagged td{background:#fde2e1}.badge{display:inline-block;padding:0 6px;border-radius:8px;\
        font-size:12px;background:#eee}.badge.bad{background:#e15759;color:#fff}.badge.ok{background:#59a14f;\
        color:#fff}.badge.warn{background:#edc948}
        .cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #e3e3e3;border-radius:6px;\
        padding:8px 12px;min-width:180px}.card .v{font-size:20px;font-weight:600}.card .k{color:#666;font-size:12px}
        .up{color:#c0392b}.down{color:#27864a}pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}
        svg.chart{max-width:100%;height:auto;display:block;margin:6px 0}details{margin:4px 0 10px}
        form.pickers{display:flex;gap:12px;align-items:end;flex-wrap:wrap;background:#f6f6f6;padding:10px;\
        border-radius:6px}form.pickers label{display:flex;flex-direction:column;font-size:12px;color:#555}
        .empty{color:#888;font-style:italic}
        """

    static func header(_ report: Report) -> String {
        var html = "<h1>\(HTML.escape(report.request.app))</h1><p class=\"meta\">"
        html += "\(report.request.days.from) – \(report.request.days.to)"
        html += " (\(report.request.days.dayCount) days, UTC)"
        if !report.request.versions.isEmpty {
            html += " · versions \(HTML.escape(report.request.versions.joined(separator: ", ")))"
        }
        html += " · generated \(HTML.escape(UTCTimestamp.iso8601(report.generatedAt)))</p>"
        return html
    }

    /// Every section of the report but the metrics explorer's (``ReportExplorer``, the dashboard's
    /// metrics page), in order.
    package static func sections(_ report: Report) -> String {
        summary(report) + comparison(report) + gates(report) + exits(report) + appStates(report) + handlers(report)
            + restoration(report) + crashes(report) + percentiles(report) + alerts(report)
    }

    static func summary(_ report: Report) -> String {
        var html = "<h2>Summary</h2><div class=\"cards\">"
        for item in report.summary {
            html += "<div class=\"card\"><div class=\"v\">\(HTML.escape(item.figure.display(item.value)))</div>"
            html += "<div class=\"k\">\(HTML.escape(item.figure.title))<br><code>\(item.figure.name)</code></div></div>"
        }
        return html + "</div>"
    }

    static func comparison(_ report: Report) -> String {
        guard let pair = report.request.compare else { return "" }
        var html = "<h2>Version \(HTML.escape(pair.base)) → \(HTML.escape(pair.target))</h2><table><tr>"
        html += "<th>figure</th><th class=\"n\">\(HTML.escape(pair.base))</th>"
        html += "<th class=\"n\">\(HTML.escape(pair.target))</th><th class=\"n\">delta</th></tr>"
        for row in report.comparison {
            let delta = row.delta
            let css = delta.map { $0 > 0 ? "up" : ($0 < 0 ? "down" : "") } ?? ""
            let sign = (delta ?? 0) > 0 ? "+" : ""
            html += "<tr><td>\(HTML.escape(row.figure.title))</td>"
            html += "<td class=\"n\">\(HTML.escape(row.figure.display(row.base)))</td>"
            html += "<td class=\"n\">\(HTML.escape(row.figure.display(row.target)))</td>"
            html +=
                "<td class=\"n \(css)\">\(delta == nil ? "—" : sign + HTML.escape(row.figure.display(delta)))</td></tr>"
        }
        return html + "</table>"
    }

    static func gates(_ report: Report) -> String {
        guard !report.gates.isEmpty else { return "" }
        var html = "<h2>Release gates</h2><table><tr><th>condition</th><th class=\"n\">value</th><th>result</th></tr>"
        for gate in report.gates {
            let value = gate.value.map { NumberText.fixed($0, digits: 6) } ?? "no data"
            html += "<tr\(gate.tripped ? " class=\"flagged\"" : "")><td><code>\(HTML.escape(gate.condition.text))"
            html += "</code></td><td class=\"n\">\(HTML.escape(value))</td><td>"
            html += gate.tripped ? "<span class=\"badge bad\">FAIL</span>" : "<span class=\"badge ok\">pass</span>"
            html += "</td></tr>"
        }
        return html + "</table>"
    }

    static func exits(_ report: Report) -> String {
        var html = "<h2>Exits by version</h2>"
        guard !report.exits.isEmpty else { return html + "<p class=\"empty\">No metric payloads in scope.</p>" }
        for state in [AppState.foreground, .background] {
            let rows = report.exits.filter { $0.state == state }
            let chart = ExitChart(rows: rows, versions: report.versions)
            html += SVGChart.stackedBars(
                title: "\(state.rawValue.capitalized) exits per 1,000 device-days, by reason",
                categories: report.versions, series: chart.series, unit: "per 1k device-days")
        }
        html += "<details><summary>All exit counts and rates</summary><table><tr><th>version</th><th>state</th>"
        html += "<th>reason</th><th class=\"n\">count</th><th class=\"n\">per 1k device-days</th>"
        html += "<th class=\"n\">per hour</th></tr>"
        for row in report.exits {
            html += "<tr><td>\(HTML.escape(row.key.version ?? "—"))</td><td>\(row.state.rawValue)</td>"
            html += "<td>\(HTML.escape(row.reason))</td><td class=\"n\">\(NumberText.grouped(Double(row.count)))</td>"
            html += "<td class=\"n\">\(row.perThousandDeviceDays.map { NumberText.fixed($0, digits: 2) } ?? "—")</td>"
            html += "<td class=\"n\">\(row.perHour.map { NumberText.fixed($0, digits: 4) } ?? "—")</td></tr>"
        }
        return html + "</table></details>"
    }

    /// iOS 27 data: where (which app state) the terminations and hangs happen; nothing without states.
    static func appStates(_ report: Report) -> String {
        guard !report.exitsByAppState.isEmpty || !report.hangsByAppState.isEmpty else { return "" }
        var html = "<h2>By app state</h2><table><tr><th>app state</th><th>state</th><th>reason</th>"
        html += "<th class=\"n\">count</th><th class=\"n\">per 1k device-days</th></tr>"
        for row in report.exitsByAppState {
            html += "<tr><td>\(HTML.escape(row.key[.appState] ?? "—"))</td><td>\(row.state.rawValue)</td>"
            html += "<td>\(HTML.escape(row.reason))</td><td class=\"n\">\(NumberText.grouped(Double(row.count)))</td>"
            html +=
                "<td class=\"n\">\(row.perThousandDeviceDays.map { NumberText.fixed($0, digits: 2) } ?? "—")</td></tr>"
        }
        html += "</table><table><tr><th>app state</th><th class=\"n\">hangs</th><th class=\"n\">p50 ms</th>"
        html += "<th class=\"n\">p95 ms</th></tr>"
        for row in report.hangsByAppState {
            html += "<tr><td>\(HTML.escape(row.key[.appState] ?? "—"))</td>"
            html += "<td class=\"n\">\(NumberText.grouped(Double(row.samples)))</td>"
            html += "<td class=\"n\">\(row.p50.map { NumberText.fixed($0, digits: 0) } ?? "—")</td>"
            html += "<td class=\"n\">\(row.p95.map { NumberText.fixed($0, digits: 0) } ?? "—")</td></tr>"
        }
        return html + "</table>"
    }

    static func handlers(_ report: Report) -> String {
        var html = "<h2>Background-task expiration handlers</h2>"
        guard !report.handlers.isEmpty else {
            return html + "<p class=\"empty\">No expiration-handler signposts in scope.</p>"
        }
        html += "<table><tr><th>version</th><th>handler</th><th class=\"n\">entered</th><th class=\"n\">exited</th>"
        html += "<th class=\"n\">imbalance</th><th class=\"n\">ratio</th><th class=\"n\">assertion timeouts</th>"
        html += "<th></th></tr>"
        for row in report.handlers {
            html += "<tr\(row.flagged ? " class=\"flagged\"" : "")><td>\(HTML.escape(row.key.version ?? "—"))</td>"
            html += "<td>\(HTML.escape(row.category))/\(HTML.escape(row.handler))</td>"
            html += "<td class=\"n\">\(row.entered)</td><td class=\"n\">\(row.exited)</td>"
            html += "<td class=\"n\">\(row.imbalance)</td>"
            html +=
                "<td class=\"n\">\(row.imbalanceRatio.map { NumberText.fixed($0 * 100, digits: 2) + " %" } ?? "—")</td>"
            html += "<td class=\"n\">\(row.assertionTimeoutExits)</td>"
            html += "<td>\(row.flagged ? "<span class=\"badge bad\">flagged</span>" : "")</td></tr>"
        }
        return html + "</table>"
    }

    static func restoration(_ report: Report) -> String {
        var html = "<h2>State restoration</h2>"
        guard !report.restorationByVersion.isEmpty else {
            return html + "<p class=\"empty\">No state-restoration signposts in scope.</p>"
        }
        let days = report.restorationByDay.compactMap(\.key.day)
        html += SVGChart.lines(
            title: "Restoration error rate per day", xLabels: days,
            series: [
                .init(name: "error rate %", values: report.restorationByDay.map { $0.errorRate.map { $0 * 100 } })
            ],
            unit: "%")
        html += SVGChart.lines(
            title: "Restoration duration per day", xLabels: days,
            series: [
                .init(name: "p50", values: report.restorationByDay.map(\.p50Milliseconds)),
                .init(name: "p95", values: report.restorationByDay.map(\.p95Milliseconds)),
            ], unit: "ms")
        html += "<table><tr><th>version</th><th class=\"n\">attempts</th><th class=\"n\">failures</th>"
        html += "<th class=\"n\">error rate</th><th class=\"n\">p50</th><th class=\"n\">p95</th></tr>"
        for row in report.restorationByVersion {
            html += "<tr><td>\(HTML.escape(row.key.version ?? "—"))</td><td class=\"n\">\(row.attempts)</td>"
            html += "<td class=\"n\">\(row.failures)</td>"
            html += "<td class=\"n\">\(row.errorRate.map { NumberText.fixed($0 * 100, digits: 3) + " %" } ?? "—")</td>"
            html +=
                "<td class=\"n\">\(ms(row.p50Milliseconds))</td><td class=\"n\">\(ms(row.p95Milliseconds))</td></tr>"
        }
        return html + "</table>"
    }

    static func crashes(_ report: Report) -> String {
        var html = "<h2>Top crash groups</h2>"
        guard !report.crashes.isEmpty else { return html + "<p class=\"empty\">No diagnostics in scope.</p>" }
        html +=
            "<p class=\"meta\">\(report.crashes.count) of \(report.crashGroupCount) groups, most frequent first.</p>"
        html += "<table><tr><th>group</th><th>kind</th><th>exception / signal</th><th class=\"n\">count</th>"
        html += "<th>by version</th><th>first / last seen</th></tr>"
        for crash in report.crashes {
            let decoded = [crash.exceptionName, crash.signalName].compactMap { $0 }.joined(separator: " / ")
            html += "<tr><td>#\(crash.group.id) \(HTML.escape(crash.group.title))"
            html += crash.isWatchdog ? " <span class=\"badge warn\">watchdog 0x8BADF00D</span>" : ""
            html += "<details><summary>sample stack</summary><pre>\(HTML.escape(Stack.text(crash.group)))</pre>"
            html += "</details></td><td>\(crash.kind.rawValue)</td><td>\(HTML.escape(decoded.isEmpty ? "—" : decoded))"
            html += "</td><td class=\"n\">\(crash.count)</td><td>"
            html += HTML.escape(Stack.versions(crash.countByVersion))
            html +=
                "</td><td>\(UTCTimestamp.iso8601(crash.group.firstSeen))<br>\(UTCTimestamp.iso8601(crash.group.lastSeen))</td></tr>"
        }
        return html + "</table>" + missingSymbols(report)
    }

    /// The app's binaries whose frames stay unsymbolicated for want of a dSYM.
    static func missingSymbols(_ report: Report) -> String {
        guard !report.missingSymbols.isEmpty else { return "" }
        var html = "<h3>Missing symbols</h3><p class=\"meta\">The app's binaries seen in diagnostics with no dSYM "
        html +=
            "uploaded, most diagnostics first: upload them (<code>lifeline dsym upload</code>) to name their frames.</p>"
        html += "<table><tr><th>binary</th><th>UUID</th><th class=\"n\">diagnostics</th></tr>"
        for row in report.missingSymbols {
            html += "<tr><td>\(HTML.escape(row.binaryName ?? "—"))</td><td><code>\(HTML.escape(row.uuid))</code></td>"
            html += "<td class=\"n\">\(row.diagnostics)</td></tr>"
        }
        return html + "</table>"
    }

    static func percentiles(_ report: Report) -> String {
        var html = "<h2>Launch and hang percentiles</h2>"
        let series =
            report.launch.map { ($0.name.replacingOccurrences(of: "_", with: " "), $0.rows) }
            + [("hang duration", report.hangs)]
        let present = series.filter { !$0.1.isEmpty }
        guard !present.isEmpty else { return html + "<p class=\"empty\">No launch or hang histograms in scope.</p>" }
        html += "<table><tr><th>histogram</th><th>version</th><th class=\"n\">samples</th><th class=\"n\">p50</th>"
        html += "<th class=\"n\">p90</th><th class=\"n\">p95</th><th class=\"n\">p99</th></tr>"
        for (name, rows) in present {
            for row in rows {
                html += "<tr><td>\(HTML.escape(name))</td><td>\(HTML.escape(row.key.version ?? "—"))</td>"
                html += "<td class=\"n\">\(row.samples)</td><td class=\"n\">\(ms(row.p50))</td>"
                html += "<td class=\"n\">\(ms(row.p90))</td><td class=\"n\">\(ms(row.p95))</td>"
                html += "<td class=\"n\">\(ms(row.p99))</td></tr>"
            }
        }
        return html + "</table>"
    }

    static func alerts(_ report: Report) -> String {
        var html = "<h2>Alerts fired in the window</h2>"
        guard !report.alerts.isEmpty else { return html + "<p class=\"empty\">None.</p>" }
        html += "<table><tr><th>rule</th><th>labels</th><th>status</th><th>fired</th><th>resolved</th>"
        html += "<th class=\"n\">value when fired</th></tr>"
        for alert in report.alerts {
            let labels = alert.labels.filter { $0.key != "app" && $0.key != "alertname" }.sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            let badge = alert.resolvedAt == nil ? "bad" : "ok"
            html += "<tr><td>\(HTML.escape(alert.rule))</td><td>\(HTML.escape(labels))</td>"
            html += "<td><span class=\"badge \(badge)\">\(alert.status)</span></td>"
            html +=
                "<td>\(UTCTimestamp.iso8601(alert.firedAt))</td><td>\(alert.resolvedAt.map(UTCTimestamp.iso8601) ?? "—")</td>"
            html += "<td class=\"n\">\(alert.value.map { NumberText.fixed($0, digits: 4) } ?? "—")</td></tr>"
        }
        return html + "</table>"
    }

    static func ms(_ value: Double?) -> String {
        value.map { NumberText.fixed($0, digits: $0 < 100 ? 1 : 0) + " ms" } ?? "—"
    }
}

/// Exit rates per version as chart series: the reasons with the most exits, the rest as "other".
struct ExitChart {
    var series: [SVGChart.Series]

    init(rows: [ExitFigure], versions: [String], maxReasons: Int = 8) {
        var totals: [String: Int64] = [:]
        for row in rows { totals[row.reason, default: 0].addSaturating(row.count) }
        let ranked = totals.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map(\.key)
        let shown = Array(ranked.prefix(maxReasons))
        let hidden = Set(ranked.dropFirst(maxReasons))
        func rate(_ version: String, _ reasons: (String) -> Bool) -> Double? {
            let matching = rows.filter { $0.key.version == version && reasons($0.reason) }
            guard !matching.isEmpty else { return nil }
            return matching.compactMap(\.perThousandDeviceDays).reduce(0, +)
        }
        series = shown.map { reason in
            SVGChart.Series(name: reason, values: versions.map { rate($0) { $0 == reason } })
        }
        if !hidden.isEmpty {
            series.append(
                SVGChart.Series(
                    name: "other (\(hidden.count))", values: versions.map { rate($0) { hidden.contains($0) } }))
        }
    }
}

/// Text helpers shared by the renderers.
enum Stack {
    /// A crash group's sample stack, one frame per line: binary, address, offset, and the function,
    /// file and line when the app's debug symbols are known (inlined functions indented below).
    static func text(_ group: CrashGroupInfo) -> String {
        guard !group.sampleFrames.isEmpty else { return "(no frames)" }
        return group.sampleFrames.enumerated().map { index, frame in
            let binary = frame.binaryName ?? "???"
            let address = "0x" + String(frame.address, radix: 16)
            var line =
                "\(index)  \(binary.padding(toLength: max(binary.count, 24), withPad: " ", startingAt: 0)) "
                + "\(address) + \(frame.offset)"
            for (depth, symbol) in frame.symbols.enumerated() {
                let place = symbol.file.map { " (\($0)" + (symbol.line.map { ":\($0)" } ?? "") + ")" } ?? ""
                line += (depth == 0 ? "  " : "\n      inlined into ") + (symbol.function ?? "?") + place
            }
            return line
        }.joined(separator: "\n")
    }

    /// `4.2.0: 12, 4.1.0: 3`, newest version first.
    static func versions(_ counts: [String: Int64]) -> String {
        counts.sorted { VersionOrder.precedes($1.key, $0.key) }.map { "\($0.key): \($0.value)" }
            .joined(separator: ", ")
    }
}
