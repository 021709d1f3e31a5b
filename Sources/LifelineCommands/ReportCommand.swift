import ArgumentParser
import Foundation
import LifelineAlerts
import LifelineAlertState
import LifelineAnalysis
import LifelineReport
import LifelineModel
import LifelineSQLite

/// `lifeline report`: one app's figures from a database file, as HTML, Markdown or JSON.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write an offline report of one app from a database file (no server needed).",
        discussion: """
            Every figure comes from the same query model as the HTTP API and the alert rules. \
            Formats: html (one self-contained file: inline CSS and SVG charts, no network), md \
            (Markdown tables), json (snake_case, the API's field names).

            --compare BASE..TARGET adds a table of the report figures for both versions with their \
            deltas (e.g. --compare 4.1.0..4.2.0).

            --fail-on 'FIGURE OP NUMBER' (repeatable) is a release gate: OP is one of > >= < <= == !=, \
            FIGURE a report figure (device_days, exit_rate, background_exit_rate, \
            assertion_timeout_rate, max_handler_imbalance_ratio, restoration_error_rate, \
            restoration_p95_ms, crash_rate, watchdog_terminations, launch_p95_ms, hang_p95_ms) or any \
            alert-rule query (e.g. 'exit_rate{reason="AppWatchdog"}', 'percentile(hang_time, 0.99)'). \
            It is judged on the TARGET version with --compare, else on the whole window and version \
            filter; a figure with no data does not trip. The report is written either way.

            Exit status: 0 written and no gate tripped; 3 written and a gate tripped (each is named \
            on standard error); 1 the report could not be made (no such database, app or version); \
            64 bad arguments.

            Examples:
              lifeline report --app com.example.notes --out report.html
              lifeline report --app com.example.notes --format md --out - \\
                --compare 4.1.0..4.2.0 \\
                --fail-on 'restoration_error_rate>0.001'

            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Bundle identifier of the app to report on.")
    var app: String

    @Option(help: "First day (YYYY-MM-DD, UTC, inclusive). Default: 29 days before --to.")
    var from: String?

    @Option(help: "Last day (YYYY-MM-DD, UTC, inclusive). Default: today.")
    var to: String?

    @Option(parsing: .upToNextOption, help: "Only these app versions (space or comma separated).")
    var versions: [String] = []

    @Option(help: "Output format: html, md or json.")
    var format: ReportFormat = .html

    @Option(help: "Where to write the report; - for standard output. Default: lifeline-report.<format>.")
    var out: String?

    @Option(help: "Compare two versions: BASE..TARGET.")
    var compare: String?

    @Option(name: .customLong("fail-on"), help: "Release gate 'FIGURE OP NUMBER' (repeatable); exit 3 when one holds.")
    var failOn: [String] = []

    @Option(help: "How many crash groups to list.")
    var topCrashes: Int = 10

    @Option(help: "YAML configuration file; its analysis section sets the signpost conventions.")
    var config: String?

    var versionList: [String] {
        versions.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    func validate() throws {
        for (name, day) in [("--from", from), ("--to", to)] {
            if let day, UTCDay(day) == nil {
                throw ValidationError("\(name) must be a date YYYY-MM-DD, got '\(day)'")
            }
        }
        if let from, let to, let a = UTCDay(from), let b = UTCDay(to), a > b {
            throw ValidationError("--from \(from) is after --to \(to)")
        }
        if let compare, Report.VersionPair(compare) == nil {
            throw ValidationError("--compare must be two different versions BASE..TARGET, got '\(compare)'")
        }
        if topCrashes < 0 { throw ValidationError("--top-crashes must be 0 or more") }
        for gate in failOn {
            do {
                _ = try FailCondition(gate, figures: ReportFigure.standard(SignpostConventions()))
            } catch {
                throw ValidationError("--fail-on \(error.description)")
            }
        }
    }

    func run() async throws {
        let file = try config.map(ConfigFile.load)
        let conventions = file?.analysis?.conventions ?? SignpostConventions()
        let handlerFlag = file?.analysis?.handlerFlag ?? HandlerFlagRule()
        if global.isPostgres {
            try await global.withPostgres(options: file?.databaseOptions() ?? Database.Options()) { store in
                // What the nodes acknowledged and the leader has not folded yet is in the report.
                try await store.foldAll()
                try await run(source: store, alerts: store, conventions: conventions, handlerFlag: handlerFlag)
            }
            return
        }
        guard FileManager.default.fileExists(atPath: global.db) else {
            throw CommandError("no database at \(global.db)")
        }
        let database = try Database(path: global.db, options: file?.databaseOptions() ?? Database.Options())
        defer { database.checkpointForExit() }
        let applied = try database.appliedMigrations().count
        guard applied >= EmbeddedMigrations.all.count else {
            throw CommandError(
                "\(global.db) is at schema \(applied) of \(EmbeddedMigrations.all.count): run `lifeline migrate --db \(global.db)` first"
            )
        }
        // Documents a server acknowledged and had not folded when it stopped are in the report.
        let folded = try database.foldPending()
        if folded > 0 { printError("folded \(folded) documents acknowledged before the server stopped") }
        try await run(source: database, alerts: database.alertState, conventions: conventions, handlerFlag: handlerFlag)
    }

    private func run(
        source: any AggregateSource, alerts: any AlertStateStore, conventions: SignpostConventions,
        handlerFlag: HandlerFlagRule
    ) async throws {
        let analysis = AnalysisRunner(source: source, conventions: conventions, handlerFlag: handlerFlag)
        let app = self.app
        let apps = try await analysis.analyze { try await $0.apps() }.map(\.bundleID)
        guard apps.contains(app) else {
            let known = apps.joined(separator: ", ")
            throw CommandError("no app \(app) in \(global.dbDescription) (apps: \(known.isEmpty ? "none" : known))")
        }
        let now = WallClock.nowSeconds()
        // Validated by validate(); today (clamped to the days Lifeline knows) when absent.
        let lastDay = to.flatMap { UTCDay($0) } ?? UTCDay(epochSeconds: now).clamped
        let days =
            from.flatMap { UTCDay($0) }.map { DayRange(from: $0, to: lastDay) } ?? DayRange(last: lastDay, count: 30)
        let builder = ReportBuilder(analysis: analysis, alerts: alerts)
        let gates = try failOn.map { try FailCondition($0, figures: builder.figures) }
        let request = Report.Request(
            app: app, days: days, versions: versionList,
            compare: compare.flatMap(Report.VersionPair.init), topCrashes: topCrashes)
        try await checkVersions(request, analysis: analysis)

        let started = ContinuousClock.now
        let report = try await builder.build(request, gates: gates, now: now) { section in
            printError("report: \(section) (\(Self.seconds(since: started)))")
        }
        let text: String
        switch format {
        case .html: text = ReportHTML.document(report)
        case .md: text = ReportMarkdown.render(report)
        case .json: text = try ReportJSON.render(report)
        }
        let path = out ?? "lifeline-report.\(format.rawValue)"
        if path == "-" {
            FileHandle.standardOutput.write(Data(text.utf8))
        } else {
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw CommandError("cannot write \(path): \(error.localizedDescription)")
            }
            printError("report: wrote \(path) (\(text.utf8.count) bytes) in \(Self.seconds(since: started))")
        }
        for gate in report.gates where gate.tripped {
            let value = gate.value.map { String($0) } ?? "no data"
            printError("report: gate tripped: \(gate.condition.text) (value \(value))")
        }
        if report.failed { throw ExitCode(3) }
    }

    /// Versions named by --versions or --compare must have data in the window.
    private func checkVersions(_ request: Report.Request, analysis: AnalysisRunner) async throws {
        let wanted = request.versions + (request.compare.map { [$0.base, $0.target] } ?? [])
        guard !wanted.isEmpty else { return }
        let scope = Scope(app: request.app, days: request.days)
        let versions = try await analysis.analyze { try await $0.versions(scope) }
        let present = Set(versions)
        let missing = wanted.filter { !present.contains($0) }
        guard missing.isEmpty else {
            throw CommandError(
                "no metric payloads of version \(missing.joined(separator: ", ")) for \(request.app) between "
                    + "\(request.days.from) and \(request.days.to) (versions there: "
                    + "\(versions.joined(separator: ", ")))")
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> String {
        let duration = start.duration(to: .now)
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return NumberText.fixed(milliseconds / 1000, digits: 2) + " s"
    }
}

extension ReportFormat: ExpressibleByArgument {}
