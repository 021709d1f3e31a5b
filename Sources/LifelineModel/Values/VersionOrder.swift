/// The one order of app versions in Lifeline (API rows, reports, dashboards, `--compare`).
///
/// Rule: compare the runs of digits as numbers, left to right (`4.10.0` after `4.9.1`,
/// `4.2.0 (57)` after `4.2.0 (9)`); when the numbers tie, compare the whole strings byte-wise
/// (`4.2.0` before `4.2.0-beta`), so the order is total and stable. Why: MetricKit's `appVersion`
/// is `CFBundleShortVersionString`, dot-separated integers by Apple's rules, but apps in the wild
/// add build numbers and suffixes; numeric runs order every such form the way people read it,
/// and the byte-wise tie-break keeps distinct strings distinct.
package enum VersionOrder {
    /// Whether `a` sorts before `b`.
    package static func precedes(_ a: String, _ b: String) -> Bool {
        let x = numbers(a)
        let y = numbers(b)
        return x != y ? x.lexicographicallyPrecedes(y) : a < b
    }

    /// The runs of ASCII digits of `version`, as numbers (saturating at `Int.max`).
    static func numbers(_ version: String) -> [Int] {
        var result: [Int] = []
        var current: Int?
        for byte in version.utf8 {
            let digit = byte &- UInt8(ascii: "0")
            if digit < 10 {
                let (times, o1) = (current ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int(digit))
                current = o1 || o2 ? Int.max : sum
            } else if let value = current {
                result.append(value)
                current = nil
            }
        }
        if let current { result.append(current) }
        return result
    }
}
