/// The comparison of a rule: the alert condition is `value <op> threshold`.
package enum ComparisonOperator: String, Sendable, Equatable, CaseIterable, Codable {
    case greater = ">"
    case greaterOrEqual = ">="
    case less = "<"
    case lessOrEqual = "<="
    case equal = "=="
    case notEqual = "!="

    /// Whether `value <op> threshold` holds.
    package func holds(_ value: Double, _ threshold: Double) -> Bool {
        switch self {
        case .greater: value > threshold
        case .greaterOrEqual: value >= threshold
        case .less: value < threshold
        case .lessOrEqual: value <= threshold
        case .equal: value == threshold
        case .notEqual: value != threshold
        }
    }
}
