import ArgumentParser

/// The `lifeline` command line: every subcommand lives in its own file.
public struct LifelineCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "lifeline",
        abstract: "Self-hosted MetricKit diagnostics: ingest, store, aggregate, alert.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, KeysCommand.self, IngestCommand.self, BenchCommand.self,
            MigrateDataCommand.self, BackupCommand.self, PruneCommand.self, RefoldCommand.self, CompactCommand.self,
            DsymCommand.self,
            ReportCommand.self,
            SimulateCommand.self,
            RulesCommand.self,
        ]
    )

    public init() {}
}
