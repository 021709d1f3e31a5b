/// A query of a rule that does not parse: where (1-based column in the query text) and why.
package struct QuerySyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based character column in the query text.
    package var column: Int
    package var message: String

    package init(column: Int, _ message: String) {
        self.column = column
        self.message = message
    }

    package var description: String { "column \(column): \(message)" }
}
