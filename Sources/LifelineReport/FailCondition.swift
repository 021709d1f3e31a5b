import Foundation
import LifelineAlerts
import LifelineAnalysis

/// A release gate of `lifeline report --fail-on`: `FIGURE OP NUMBER`, where FIGURE is a report
/// figure name (``ReportFigure``) or any alert-rule query (`exit_rate{reason="AppWatchdog"}`,
/// `percentile(hang_time, 0.99)`…), OP one of `> >= < <= == !=`.
package struct FailCondition: Sendable, Equatable {
    package var text: String
    /// The report figure named, if the left side is one.
    package var figureName: String?
    package var measure: Measure
    package var comparison: ComparisonOperator
    package var threshold: Double

    /// A condition that cannot be parsed, with what is wrong.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// Parses `text` against the report's named `figures`.
    package init(_ text: String, figures: [ReportFigure]) throws(ParseError) {
        self.text = text
        let operators: [ComparisonOperator] = [.greaterOrEqual, .lessOrEqual, .equal, .notEqual, .greater, .less]
        guard
            let (range, comparison) = Self.firstOperator(in: text, among: operators)
        else {
            throw ParseError(
                description: "'\(text)': expected FIGURE OP NUMBER with OP one of > >= < <= == != "
                    + "(e.g. restoration_error_rate>0.001)")
        }
        self.comparison = comparison
        let left = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        let right = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
        guard let threshold = Double(right), threshold.isFinite else {
            throw ParseError(description: "'\(text)': the threshold '\(right)' is not a number")
        }
        self.threshold = threshold
        if let figure = figures.first(where: { $0.name == left }) {
            figureName = figure.name
            measure = figure.measure
            return
        }
        do {
            measure = try QueryParser.parse(left)
            figureName = nil
        } catch {
            let names = figures.map(\.name).joined(separator: ", ")
            throw ParseError(
                description: "'\(text)': '\(left)' is neither a report figure (\(names)) nor an alert query: "
                    + "\(error.message)")
        }
    }

    /// Whether the gate trips for `value`; a figure without a value (nothing in scope) does not.
    package func trips(_ value: Double?) -> Bool {
        guard let value else { return false }
        return comparison.holds(value, threshold)
    }

    /// The first comparison operator outside quotes, preferring two-character operators.
    private static func firstOperator(
        in text: String, among operators: [ComparisonOperator]
    ) -> (Range<String.Index>, ComparisonOperator)? {
        var quote: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == "\\" {
                    index = text.index(after: index)
                } else if character == open {
                    quote = nil
                }
            } else if character == "\"" || character == "'" {
                quote = character
            } else {
                for op in operators where text[index...].hasPrefix(op.rawValue) {
                    return (index..<text.index(index, offsetBy: op.rawValue.count), op)
                }
            }
            if index < text.endIndex { index = text.index(after: index) }
        }
        return nil
    }
}
