import Foundation

/// A small template language for alert annotations, checked when the rule file loads:
/// text with `{{ … }}` expressions.
///
/// Variables: `$value` (the measured value), `$threshold`, `$samples`, `$labels.NAME`.
/// Formatters, after `|`: `percent` (0.0042 → `0.42%`), `humanize` (12345 → `12.35k`),
/// `ms` (milliseconds → `850 ms` / `1.25 s`), `fixed N` (N decimals). A missing value renders
/// as `n/a`, a missing label as an empty string.
package struct AnnotationTemplate: Sendable, Equatable {
    /// A part of a template.
    enum Part: Sendable, Equatable {
        case text(String)
        case expression(Variable, [Formatter])
    }

    /// What an expression reads.
    enum Variable: Sendable, Equatable {
        case value
        case threshold
        case samples
        case label(String)
    }

    /// How a number is written.
    enum Formatter: Sendable, Equatable {
        case percent
        case humanize
        case milliseconds
        case fixed(Int)
    }

    /// What a template is rendered with.
    package struct Context: Sendable {
        package var value: Double?
        package var threshold: Double
        package var samples: Int64
        package var labels: [String: String]

        package init(value: Double?, threshold: Double, samples: Int64, labels: [String: String]) {
            self.value = value
            self.threshold = threshold
            self.samples = samples
            self.labels = labels
        }
    }

    /// The template as written.
    package let source: String
    let parts: [Part]

    /// Labels the template reads (`$labels.X`), to check they exist.
    package var labelNames: [String] {
        parts.compactMap {
            if case .expression(.label(let name), _) = $0 { return name }
            return nil
        }
    }

    /// Parses `source`; the error message names the expression that is wrong.
    package init(_ source: String) throws(TemplateError) {
        self.source = source
        var parts: [Part] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw TemplateError("\"{{\" without a closing \"}}\"")
            }
            parts.append(try Self.expression(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        if rest.contains("}}") { throw TemplateError("\"}}\" without an opening \"{{\"") }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        self.parts = parts
    }

    private static func expression(_ text: String) throws(TemplateError) -> Part {
        let pieces = text.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let name = pieces[0]
        let variable: Variable
        switch name {
        case "$value": variable = .value
        case "$threshold": variable = .threshold
        case "$samples": variable = .samples
        default:
            guard name.hasPrefix("$labels."), name.count > 8 else {
                throw TemplateError(
                    "unknown variable \"\(name)\" in {{\(text)}} (known: $value, $threshold, $samples, $labels.NAME)")
            }
            variable = .label(String(name.dropFirst(8)))
        }
        var formatters: [Formatter] = []
        for piece in pieces.dropFirst() {
            let words = piece.split(separator: " ", omittingEmptySubsequences: true)
            switch (words.first.map(String.init), words.count) {
            case ("percent", 1): formatters.append(.percent)
            case ("humanize", 1): formatters.append(.humanize)
            case ("ms", 1): formatters.append(.milliseconds)
            case ("fixed", 2):
                guard let digits = Int(words[1]), (0...10).contains(digits) else {
                    throw TemplateError("fixed takes a number of decimals 0…10, not \"\(words[1])\"")
                }
                formatters.append(.fixed(digits))
            default:
                throw TemplateError(
                    "unknown formatter \"\(piece)\" in {{\(text)}} (known: percent, humanize, ms, fixed N)")
            }
        }
        if case .label = variable, !formatters.isEmpty {
            throw TemplateError("labels are text: formatters apply to $value, $threshold and $samples only")
        }
        return .expression(variable, formatters)
    }

    /// The text with every expression replaced.
    package func render(_ context: Context) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let text):
                out += text
            case .expression(.label(let name), _):
                out += context.labels[name] ?? ""
            case .expression(let variable, let formatters):
                let number: Double? =
                    switch variable {
                    case .value: context.value
                    case .threshold: context.threshold
                    case .samples: Double(context.samples)
                    case .label: nil
                    }
                guard let number else {
                    out += "n/a"
                    continue
                }
                out += Self.format(number, formatters.last)
            }
        }
        return out
    }

    /// `value` as templates write it without a formatter (`0.0042`, `31`).
    package static func plainNumber(_ value: Double) -> String { format(value, nil) }

    static func format(_ value: Double, _ formatter: Formatter?) -> String {
        switch formatter {
        case nil: return plain(value)
        case .percent: return trimmed(String(format: "%.2f", value * 100)) + "%"
        case .fixed(let digits): return String(format: "%.\(digits)f", value)
        case .milliseconds:
            return abs(value) >= 1000 ? trimmed(String(format: "%.2f", value / 1000)) + " s" : plain(value) + " ms"
        case .humanize:
            let units: [(Double, String)] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
            for (size, suffix) in units where abs(value) >= size {
                return trimmed(String(format: "%.2f", value / size)) + suffix
            }
            return plain(value)
        }
    }

    private static func plain(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.6g", value)
    }

    private static func trimmed(_ text: String) -> String {
        guard text.contains(".") else { return text }
        var text = Substring(text)
        while text.hasSuffix("0") { text = text.dropLast() }
        if text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }
}
