import Foundation

/// Reads a rule file in two stages (YAML into plain values, then validation of all of it) and
/// builds a ``RuleSet``; any problem anywhere refuses the whole file. `lifeline rules check`
/// runs exactly this.
package enum RuleFileLoader {
    /// Parses rule-file text; `file` names it in problems.
    package static func parse(_ text: String, file: String) throws(RuleFileError) -> RuleSet {
        var decoder = RuleFileDecoder(file: file)
        guard let document = decoder.decode(text) else { throw RuleFileError(decoder.problems) }
        var validator = RuleFileValidator(file: file)
        let set = validator.validate(document)
        let problems = (decoder.problems + validator.problems).sorted { ($0.line ?? 0) < ($1.line ?? 0) }
        guard problems.isEmpty, let set else { throw RuleFileError(problems) }
        return set
    }

    /// Reads and parses the file at `path`; problems name it by its last path component.
    package static func load(path: String) throws(RuleFileError) -> RuleSet {
        let file = (path as NSString).lastPathComponent
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw RuleFileError([
                .init(
                    file: file, line: nil, subject: nil, message: "cannot read \(path): \(error.localizedDescription)")
            ])
        }
        return try parse(text, file: file)
    }
}
