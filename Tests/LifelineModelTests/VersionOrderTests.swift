import LifelineModel
import Testing

@Suite("The one order of app versions")
struct VersionOrderTests {
    /// The rule as ``VersionOrder`` documents it, spelled out with arrays: the runs of digits as
    /// numbers, compared left to right, then the whole strings byte-wise.
    static func reference(_ a: String, _ b: String) -> Bool {
        func numbers(_ text: String) -> [Int] {
            var result: [Int] = []
            var digits = ""
            for character in text + " " {
                if let ascii = character.asciiValue, (48...57).contains(ascii) {
                    digits.append(character)
                } else if !digits.isEmpty {
                    result.append(Int(digits) ?? Int.max)
                    digits = ""
                }
            }
            return result
        }
        let (x, y) = (numbers(a), numbers(b))
        return x != y ? x.lexicographicallyPrecedes(y) : a < b
    }

    @Test("versions order as people read them: numbers by value, then the strings")
    func documentedExamples() {
        let ordered = [
            "beta", "1", "1.0", "4.2.0", "4.2.0-beta", "4.2.0 (9)", "4.2.0 (57)", "4.9.1", "4.10.0", "10.0",
        ]
        for (index, a) in ordered.enumerated() {
            for (other, b) in ordered.enumerated() {
                #expect(VersionOrder.precedes(a, b) == (index < other), "\(a) before \(b)")
            }
        }
        #expect(!VersionOrder.precedes("", ""))
        #expect(VersionOrder.precedes("", "1"))
        #expect(VersionOrder.precedes("99999999999999999999999", "99999999999999999999999.1"))
    }

    @Test("the walk over both strings agrees with the rule on every pair of a mixed set")
    func agreesWithTheRule() {
        let parts = ["", "0", "1", "2", "10", "01", "9", "123", "99999999999999999999", ".", "-", " (", ")", "b", "rc"]
        var versions: Set<String> = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<400 {
            var version = ""
            for _ in 0..<4 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                version += parts[Int(state >> 33) % parts.count]
            }
            versions.insert(version)
        }
        for a in versions {
            for b in versions {
                #expect(VersionOrder.precedes(a, b) == Self.reference(a, b), "\(a) / \(b)")
            }
        }
    }
}
