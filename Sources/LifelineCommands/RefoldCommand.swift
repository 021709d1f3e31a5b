import ArgumentParser
import Foundation
import LifelineModel
import LifelineSQLite
import LifelineStorage

/// `lifeline refold`: rebuilds the figures from the raw documents.
struct RefoldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refold",
        abstract: "Rebuild the figures (rollups, per-state rows) from the stored raw documents.",
        discussion: """
            Ingest stores each document raw and the aggregator folds it into the figures behind \
            the door. A refold throws the figures of the chosen app and days away and folds their \
            raw documents again, in one transaction: after a fix, a new figure or a migration. \
            Documents acknowledged but not folded yet (a server stopped mid-fold) are folded first. \
            Days before the last day whose raw documents are gone (retention.raw_days) keep their \
            figures as they are: there is nothing to rebuild them from. Diagnostics are counted \
            again from their stored rows; crash groups keep their ids.

            Beside a running server the refold holds the write lock while it runs (ingest waits up \
            to database.timeout_seconds, then answers 503 with Retry-After): refold one app, or \
            from a recent day, or stop the server for a whole large database.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Only this app (bundle id); default: every app.")
    var app: String?

    @Option(help: "First UTC day to refold (YYYY-MM-DD); default: every day.")
    var from: String?

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    func validate() throws {
        if let from, UTCDay(from) == nil { throw ValidationError("--from must be a UTC day YYYY-MM-DD, got \(from)") }
    }

    func run() async throws {
        if global.isPostgres {
            let started = ContinuousClock.now
            let json = self.json
            let lastLine = LastLine()
            let report = try await global.withPostgres { store in
                // What the leader has not folded yet stays its own; the refold covers the rest.
                try await store.refold(app: app, from: from.flatMap { UTCDay($0) }) { done, total in
                    guard !json, lastLine.due() else { return }
                    printError("… \(done)/\(total) documents refolded")
                }
            }
            try show(report, since: started)
            return
        }
        let started = ContinuousClock.now
        let lastLine = LastLine()
        let report = try global.withFoldedSQLite(quiet: json) { database in
            try database.refold(app: app, from: from.flatMap { UTCDay($0) }) { done, total in
                guard !json, lastLine.due() else { return }
                printError("… \(done)/\(total) documents refolded")
            }
        }
        try show(report, since: started)
    }

    private func show(_ report: RefoldReport, since started: ContinuousClock.Instant) throws {
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(
                "refolded \(report.documents) documents and \(report.diagnostics) diagnostic cells of \(report.apps) "
                    + "app(s) in \(String(format: "%.1f", seconds)) s"
                    + (report.unreadable > 0 ? "; \(report.unreadable) raw documents could not be read" : ""))
            for (bundle, day) in report.firstDays.sorted(by: { $0.key < $1.key }) {
                print("  \(bundle): from \(day)")
            }
        }
    }
}
