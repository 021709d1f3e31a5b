import ArgumentParser
import Foundation
import LifelineModel
import LifelineSQLite
import LifelineStorage
import Synchronization

/// `lifeline prune`: applies the retention policy once, as the server's pruning service does.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete what the retention policy no longer keeps, once, and print what was removed.",
        discussion: """
            Reads the retention: section of --config (defaults: raw_days 30, data_days 180, \
            idempotency_days 7, alert_history_days 90; 0 keeps forever); the --*-days flags win over it. \
            Safe while the server runs: it deletes in short transactions with a pause between them, \
            so ingest keeps its write turn. Days are UTC days by each payload's own day; queries over \
            pruned days answer as if nothing had been stored. Free pages are then returned to the file \
            system (databases created before this version keep them for reuse; --vacuum converts them, \
            with the server stopped).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "YAML configuration file; its retention: section is the policy.")
    var config: String?

    @Flag(help: "Count what would be removed, remove nothing.")
    var dryRun = false

    @Option(help: "Override retention.raw_days (raw documents).")
    var rawDays: Int?

    @Option(help: "Override retention.data_days (payloads, rows, rollups, crash groups).")
    var dataDays: Int?

    @Option(help: "Override retention.idempotency_days.")
    var idempotencyDays: Int?

    @Option(help: "Override retention.alert_history_days.")
    var alertHistoryDays: Int?

    @Option(help: "Payloads deleted per transaction.")
    var batchSize: Int = 100

    @Option(help: "Pause between two transactions, milliseconds (lets a running server's writer in).")
    var pauseMs: Int = 20

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(
        help: """
            Afterwards, switch a database created before incremental vacuum to it and compact it \
            (a full VACUUM: rewrites the file and blocks writers; stop the server first).
            """)
    var vacuum = false

    func validate() throws {
        for (name, value) in [
            ("--raw-days", rawDays), ("--data-days", dataDays), ("--idempotency-days", idempotencyDays),
            ("--alert-history-days", alertHistoryDays),
        ] {
            if let value, !(0...RetentionPolicy.maxDays).contains(value) {
                throw ValidationError("\(name) must be 0 (keep forever) to \(RetentionPolicy.maxDays)")
            }
        }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard (0...10_000).contains(pauseMs) else { throw ValidationError("--pause-ms must be 0…10000") }
        if vacuum && dryRun { throw ValidationError("--vacuum removes nothing in a --dry-run; choose one") }
        if vacuum && global.isPostgres {
            throw ValidationError("--vacuum is for SQLite files; PostgreSQL reclaims space with its own (auto)vacuum")
        }
    }

    func run() async throws {
        var policy = try config.map(ConfigFile.load)?.retention ?? RetentionPolicy()
        if let rawDays { policy.rawDays = rawDays }
        if let dataDays { policy.dataDays = dataDays }
        if let idempotencyDays { policy.idempotencyDays = idempotencyDays }
        if let alertHistoryDays { policy.alertHistoryDays = alertHistoryDays }
        if !json {
            printError(
                "retention: data kept \(Self.describe(policy.dataDays)), raw documents \(Self.describe(policy.rawDays)), "
                    + "idempotency records \(Self.describe(policy.idempotencyDays)), "
                    + "alert history \(Self.describe(policy.alertHistoryDays))")
        }
        if global.isPostgres {
            try await prunePostgres(policy)
            return
        }
        guard FileManager.default.fileExists(atPath: global.db) else {
            throw CommandError("no database at \(global.db)")
        }
        let database = try Database(path: global.db)
        defer { database.checkpointForExit() }
        try database.migrate()
        let started = ContinuousClock.now
        let before = try database.fileBytes()
        let pruner = Pruner(
            database: database, policy: policy,
            options: .init(batchSize: batchSize, pause: .milliseconds(pauseMs)))
        let lastLine = LastLine()
        var report = try await pruner.run(dryRun: dryRun) { report in
            guard lastLine.due(), !dryRun else { return }
            printError("… \(report.summary) (\(report.transactions) transactions so far)")
        }
        if vacuum {
            printError("vacuum: switching to incremental auto-vacuum and rewriting the file…")
            try database.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try database.execute("VACUUM")
            report.autoVacuum = true
        }
        try? database.checkpoint()
        let after = try database.fileBytes()
        try printReport(report)
        if !json && !dryRun {
            let note = report.autoVacuum ? "" : " (free pages kept for reuse: run with --vacuum once to return them)"
            print(
                "database file \(before) → \(after) bytes\(note); \(report.transactions) transactions in "
                    + "\(started.duration(to: .now))")
        }
    }

    /// PostgreSQL: partitions dropped, rows deleted in short transactions (the database
    /// reclaims space by its own vacuum).
    private func prunePostgres(_ policy: RetentionPolicy) async throws {
        try await global.withPostgres { store in
            let started = ContinuousClock.now
            let lastLine = LastLine()
            let report = try await store.prune(policy: policy, dryRun: dryRun, batchSize: batchSize) { report in
                guard lastLine.due(), !dryRun, !json else { return }
                printError("… \(report.summary) (\(report.transactions) transactions so far)")
            }
            try printReport(report)
            if !json && !dryRun {
                print("\(report.transactions) transactions in \(started.duration(to: .now))")
            }
        }
    }

    /// The report as JSON (`--json`) or as lines.
    private func printReport(_ report: PruneReport) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        print(report.summary)
        if let day = report.dataKeptFrom { print("data kept from \(day)") }
        if let day = report.rawKeptFrom { print("raw documents kept from \(day)") }
    }

    private static func describe(_ days: Int) -> String {
        days == 0 ? "forever" : "\(days) days"
    }
}

/// Rate-limits progress lines to one every two seconds.
final class LastLine: Sendable {
    private let last = Mutex(ContinuousClock.now)

    func due() -> Bool {
        last.withLock { last in
            guard last.duration(to: .now) >= .seconds(2) else { return false }
            last = .now
            return true
        }
    }
}
