/// A value bound to or read from a SQLite statement.
package enum SQLValue: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer, or `nil` for other cases.
    package var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a `Double` (integers are converted), or `nil` for other cases.
    package var real: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    /// The text, or `nil` for other cases.
    package var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, or `nil` for other cases.
    package var blob: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// Whether this is SQL NULL.
    package var isNull: Bool { self == .null }
}

extension SQLValue {
    /// `.text(value)`, or `.null` for `nil`.
    static func text(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    /// `.integer(value)`, or `.null` for `nil`.
    static func integer(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
    /// `.real(value)`, or `.null` for `nil` (NaN and infinities become NULL: SQLite has no NaN).
    static func real(_ value: Double?) -> SQLValue {
        guard let value, value.isFinite else { return .null }
        return .real(value)
    }
}
