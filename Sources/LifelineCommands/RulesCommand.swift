import ArgumentParser

/// `lifeline rules`: check and try alert rule files.
struct RulesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Check alert rule files, and try them against payload files.",
        subcommands: [RulesCheckCommand.self, RulesTestCommand.self]
    )
}
