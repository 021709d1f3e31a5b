import ArgumentParser
import LifelineAlerts

/// `lifeline rules check FILE`: the validation `serve` and `POST /-/reload` run, on its own.
struct RulesCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate an alert rule file; print every problem with its line.",
        discussion: """
            Reads the whole file (YAML, then every field: queries, thresholds, durations, labels, \
            annotation templates, receivers, routes) and prints one line per problem, like \
            `rules.yaml:14: rule "x": threshold must be a number`, on standard error. \
            Exit code 0 when the file is valid, 1 otherwise.
            """
    )

    @Argument(help: "The rule file (YAML).")
    var file: String

    func run() throws {
        do {
            let set = try RuleFileLoader.load(path: file)
            let groups = Set(set.rules.map(\.group)).count
            print(
                "\(file): OK, \(set.rules.count) rule\(set.rules.count == 1 ? "" : "s") in \(groups) group\(groups == 1 ? "" : "s"), "
                    + "\(set.receivers.count) receiver\(set.receivers.count == 1 ? "" : "s")")
        } catch {
            for problem in error.problems { printError(problem.description) }
            printError("\(file): \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
    }
}
