import Foundation
import LifelineModel

/// The simulator's draws on the shared generator (``LifelineModel/SplitMix64``).
extension SplitMix64 {
    /// A uniform double in `0..<1` (53 random bits).
    package mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform integer in `range`.
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// `true` with probability `p`.
    package mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    /// A Poisson-distributed count with mean `mean` (Knuth for small means, a rounded normal above 30).
    package mutating func poisson(_ mean: Double) -> Int {
        guard mean > 0 else { return 0 }
        if mean > 30 {
            let u1 = max(unit(), 1e-12)
            let u2 = unit()
            let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
            return max(0, Int((mean + normal * mean.squareRoot()).rounded()))
        }
        let limit = exp(-mean)
        var product = unit()
        var count = 0
        while product > limit {
            count += 1
            product *= unit()
        }
        return count
    }

    /// How many of `trials` independent events with probability `p` happen.
    package mutating func binomial(_ trials: Int, _ p: Double) -> Int {
        guard trials > 0, p > 0 else { return 0 }
        if trials > 200 { return min(trials, poisson(Double(trials) * p)) }
        var hits = 0
        for _ in 0..<trials where unit() < p { hits += 1 }
        return hits
    }

    /// One element chosen with probability proportional to its weight.
    package mutating func weighted<T>(_ choices: [(T, Double)]) -> T {
        let total = choices.reduce(0) { $0 + $1.1 }
        var target = unit() * total
        for (value, weight) in choices {
            if target < weight { return value }
            target -= weight
        }
        return choices[choices.count - 1].0
    }

    /// A uniformly chosen element of a non-empty array.
    package mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(next() % UInt64(choices.count))]
    }

    /// Shuffles an array with this generator (Fisher–Yates), deterministically.
    package mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for i in stride(from: array.count - 1, to: 0, by: -1) {
            let j = Int(next() % UInt64(i + 1))
            array.swapAt(i, j)
        }
    }
}

/// A stable 64-bit hash of strings (FNV-1a), for stream identifiers and idempotency keys.
package func stableHash(_ parts: String...) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for part in parts {
        for byte in part.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        hash ^= 0xFF
        hash &*= 0x0000_0100_0000_01B3
    }
    return hash
}
