/// One thing wrong with a rule file: where (line), what it concerns (`rule "x"`, `receiver "y"`)
/// and what is wrong. Reads as `rules.yaml:14: rule "restoration_error_rate": threshold must be a number`.
package struct RuleFileProblem: Sendable, Equatable, CustomStringConvertible, Codable {
    /// The file name as given (or `<input>`).
    package var file: String
    /// 1-based line, when known.
    package var line: Int?
    /// What the problem concerns, e.g. `rule "restoration_error_rate"`; `nil` for the file itself.
    package var subject: String?
    package var message: String

    package init(file: String, line: Int?, subject: String?, message: String) {
        self.file = file
        self.line = line
        self.subject = subject
        self.message = message
    }

    package var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let subject { text += "\(subject): " }
        return text + message
    }
}
