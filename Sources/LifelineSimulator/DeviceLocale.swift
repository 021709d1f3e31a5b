/// How a device formats MetricKit measurement strings: number grouping and, for some languages,
/// localized unit names. Values are always whole numbers, as MetricKit writes them.
package enum DeviceLocale: String, Sendable, CaseIterable, Equatable {
    /// English with grouping: `"1,234 ms"`, `"200,000 kB"`, `"20 sec"`.
    case english = "en_US"
    /// English without grouping (older OS builds): `"1234 ms"`, `"200000 kB"`.
    case englishPlain = "en_GB"
    /// Chinese: grouping with `,`, localized units without a space: `"1,530毫秒"`, `"2,717秒"`,
    /// `"1,106,818千字节"`; other units stay English.
    case chinese = "zh_CN"
    /// German: `.` groups: `"1.234 ms"`, `"1.106.818 kB"`.
    case german = "de_DE"
    /// French: U+202F (narrow no-break space) groups: `"1 234 ms"`.
    case french = "fr_FR"

    /// The `regionFormat` a device of this locale reports.
    package var regionFormat: String {
        switch self {
        case .english: "US"
        case .englishPlain: "GB"
        case .chinese: "CN"
        case .german: "DE"
        case .french: "FR"
        }
    }

    /// A realistic fleet mix (weights).
    static let mix: [(DeviceLocale, Double)] = [
        (.english, 0.50), (.englishPlain, 0.08), (.chinese, 0.17), (.german, 0.13), (.french, 0.12),
    ]

    /// Formats a whole number with this locale's grouping.
    package func number(_ value: Int64) -> String {
        let separator: String
        switch self {
        case .english, .chinese: separator = ","
        case .englishPlain: return String(value)
        case .german: separator = "."
        case .french: separator = "\u{202F}"
        }
        let digits = String(value.magnitude)
        var out = value < 0 ? "-" : ""
        let head = digits.count % 3
        for (i, c) in digits.enumerated() {
            if i > 0 && (i - head) % 3 == 0 { out += separator }
            out.append(c)
        }
        return out
    }

    /// A measurement string: `value` written in `unit`, localized.
    package func measurement(_ value: Int64, _ unit: SimUnit) -> String {
        let text = number(value)
        if self == .chinese, let localized = unit.chinese { return text + localized }
        return text + " " + unit.english
    }
}

/// The units the simulator writes, with the factor to Lifeline's canonical unit.
package enum SimUnit: Sendable, CaseIterable {
    case milliseconds
    case seconds
    case kilobytes
    case bytes
    case kiloinstructions
    case millisecondsPerSecond
    case apl
    case bars

    /// The English spelling.
    package var english: String {
        switch self {
        case .milliseconds: "ms"
        case .seconds: "sec"
        case .kilobytes: "kB"
        case .bytes: "byte"
        case .kiloinstructions: "kiloinstructions"
        case .millisecondsPerSecond: "ms per s"
        case .apl: "apl"
        case .bars: "bars"
        }
    }

    /// The Chinese spelling, when Chinese devices localize the unit.
    package var chinese: String? {
        switch self {
        case .milliseconds: "毫秒"
        case .seconds: "秒"
        case .kilobytes: "千字节"
        case .bytes: "字节"
        default: nil
        }
    }

    /// Multiplier from the written number to Lifeline's canonical unit (ms, bytes, instructions…).
    package var canonicalFactor: Double {
        switch self {
        case .seconds: 1000
        case .kilobytes: 1000
        case .kiloinstructions: 1000
        default: 1
        }
    }
}
