/// A rule file that cannot be used, with every problem found (nothing of it is applied).
package struct RuleFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every problem, in file order.
    package var problems: [RuleFileProblem]

    package init(_ problems: [RuleFileProblem]) {
        self.problems = problems
    }

    /// One problem line per problem.
    package var description: String { problems.map(\.description).joined(separator: "\n") }
}
