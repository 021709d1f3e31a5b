/// A small, fast, seedable pseudo-random generator (SplitMix64, Steele/Lea/Flood 2014).
///
/// Deterministic on every platform, unlike `SystemRandomNumberGenerator`: the same seed gives
/// the same sequence, which is what makes simulated payloads byte-identical across runs and every
/// bootstrap reproducible. The simulator (`LifelineSimulator`) and the insights
/// (`LifelineAnalysis`) add the draws they need in their own extensions.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    package init(seed: UInt64) {
        state = seed
    }

    /// A generator derived from a seed and a list of stream identifiers (device, day, kind…),
    /// so every stream is independent of how many values other streams drew.
    package init(seed: UInt64, stream: [UInt64]) {
        var mixer = SplitMix64(seed: seed)
        var state = mixer.next()
        for value in stream {
            var step = SplitMix64(seed: state ^ (value &* 0x9E37_79B9_7F4A_7C15))
            state = step.next()
            mixer = step
        }
        self.state = state
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
