import Foundation
import LifelineModel

/// The bootstrap's generator: the shared seeded SplitMix64 (``LifelineModel/SplitMix64``), so every
/// bootstrap is reproducible (no system entropy, no `Double.random`), with the draws it needs.
package typealias BootstrapRNG = SplitMix64

extension SplitMix64 {
    /// Uniform in the open interval (0, 1), 53 bits.
    package mutating func nextUnit() -> Double {
        (Double(next() >> 11) + 0.5) * 0x1p-53
    }

    /// Standard normal (Marsaglia's polar method).
    package mutating func nextNormal() -> Double {
        while true {
            let u = 2 * nextUnit() - 1
            let v = 2 * nextUnit() - 1
            let s = u * u + v * v
            if s > 0, s < 1 { return u * (-2 * log(s) / s).squareRoot() }
        }
    }

    /// Gamma(`shape`, 1) for `shape ≥ 1` (Marsaglia & Tsang, 2000); smaller shapes are raised to 1.
    package mutating func nextGamma(shape: Double) -> Double {
        let d = Swift.max(shape, 1) - 1.0 / 3.0
        let c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double
            var v: Double
            repeat {
                x = nextNormal()
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = nextUnit()
            if u < 1 - 0.0331 * x * x * x * x { return d * v }
            if log(u) < 0.5 * x * x + d * (1 - v + log(v)) { return d * v }
        }
    }

    /// Beta(`a`, `b`) for `a, b ≥ 1`, as `X / (X + Y)` of two gamma draws.
    package mutating func nextBeta(_ a: Double, _ b: Double) -> Double {
        let x = nextGamma(shape: a)
        let y = nextGamma(shape: b)
        return x / (x + y)
    }

    /// A seed mixed from `seed` and the bytes of `text` (FNV-1a then one SplitMix64 step), so each
    /// metric and population draws its own stream from one configured seed.
    package static func derive(_ seed: UInt64, _ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        var mixer = BootstrapRNG(seed: seed ^ hash)
        return mixer.next()
    }
}
