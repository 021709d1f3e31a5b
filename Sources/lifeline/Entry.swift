import ArgumentParser
import LifelineCommands

/// The `lifeline` executable: the command tree lives in `LifelineCommands`, so every command is
/// testable as a library; `@main` on an `AsyncParsableCommand` runs the async commands.
@main
struct Entry: AsyncParsableCommand {
    static let configuration = LifelineCommand.configuration
}
