/// Durations of rule files, Prometheus style: `90s`, `5m`, `2h`, `1d`, `1w`, `1h30m`, `0`.
package enum RuleDuration {
    private static let units: [(suffix: Character, seconds: Int64)] = [
        ("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1),
    ]

    /// Seconds of `text`, or `nil` when it is not a duration.
    package static func seconds(_ text: String) -> Int64? {
        if text == "0" { return 0 }
        var total: Int64 = 0
        var digits = ""
        var sawUnit = false
        var lastUnitIndex = -1
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            guard let index = units.firstIndex(where: { $0.suffix == character }), index > lastUnitIndex,
                let amount = Int64(digits), amount <= 1_000_000
            else { return nil }
            total += amount * units[index].seconds
            lastUnitIndex = index
            digits = ""
            sawUnit = true
        }
        guard sawUnit, digits.isEmpty else { return nil }
        return total
    }

    /// The shortest text for `seconds` (`7200` → `2h`, `5400` → `1h30m`, `0` → `0s`).
    package static func format(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds
        var text = ""
        for (suffix, size) in units where rest >= size {
            text += "\(rest / size)\(suffix)"
            rest %= size
        }
        return text
    }
}
