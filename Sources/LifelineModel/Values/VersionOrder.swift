/// The one order of app versions in Lifeline (API rows, reports, dashboards, `--compare`).
///
/// Rule: compare the runs of digits as numbers, left to right (`4.10.0` after `4.9.1`,
/// `4.2.0 (57)` after `4.2.0 (9)`); when the numbers tie, compare the whole strings byte-wise
/// (`4.2.0` before `4.2.0-beta`), so the order is total and stable. Why: MetricKit's `appVersion`
/// is `CFBundleShortVersionString`, dot-separated integers by Apple's rules, but apps in the wild
/// add build numbers and suffixes; numeric runs order every such form the way people read it,
/// and the byte-wise tie-break keeps distinct strings distinct.
package enum VersionOrder {
    /// Whether `a` sorts before `b`. Walks both strings' digit runs side by side, without
    /// collecting them (sorts of thousands of rows call this for every comparison).
    package static func precedes(_ a: String, _ b: String) -> Bool {
        var x = DigitRuns(a.utf8)
        var y = DigitRuns(b.utf8)
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return a < b
            case (nil, .some): return true
            case (.some, nil): return false
            case (.some(let m), .some(let n)) where m != n: return m < n
            default: continue
            }
        }
    }

    /// The runs of ASCII digits of a string's bytes, one number at a time.
    struct DigitRuns: IteratorProtocol {
        private var bytes: String.UTF8View.Iterator

        init(_ utf8: String.UTF8View) { bytes = utf8.makeIterator() }

        mutating func next() -> Int? {
            var current: Int?
            while let byte = bytes.next() {
                let digit = byte &- UInt8(ascii: "0")
                if digit < 10 {
                    let (times, o1) = (current ?? 0).multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times.addingReportingOverflow(Int(digit))
                    current = o1 || o2 ? Int.max : sum
                } else if current != nil {
                    return current
                }
            }
            return current
        }
    }
}
