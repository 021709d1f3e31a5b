import Foundation
import LifelineModel

/// An OS release as devices report it.
package struct OSRelease: Sendable, Equatable {
    /// Major version (16, 17, 18).
    package var major: Int
    /// `"iPhone OS 17.4.1 (21E236)"`.
    package var display: String
    /// The build (`"21E236"`), which also seeds system binary UUIDs.
    package var build: String

    static let mix: [(OSRelease, Double)] = [
        (OSRelease(major: 16, display: "iPhone OS 16.7.8 (20H343)", build: "20H343"), 0.06),
        (OSRelease(major: 17, display: "iPhone OS 17.4.1 (21E236)", build: "21E236"), 0.08),
        (OSRelease(major: 17, display: "iPhone OS 17.5.1 (21F90)", build: "21F90"), 0.12),
        (OSRelease(major: 17, display: "iPhone OS 17.6.1 (21G93)", build: "21G93"), 0.18),
        (OSRelease(major: 18, display: "iPhone OS 18.0 (22A3354)", build: "22A3354"), 0.10),
        (OSRelease(major: 18, display: "iPhone OS 18.1 (22B83)", build: "22B83"), 0.20),
        (OSRelease(major: 18, display: "iPhone OS 18.2 (22C152)", build: "22C152"), 0.26),
    ]
}

/// One simulated device: what it is, how it formats numbers, how much it is used, and when it
/// adopts each app version.
package struct Device: Sendable, Equatable {
    /// Index in the population, `0..<devices`.
    package var index: Int
    package var os: OSRelease
    /// Model identifier, e.g. `"iPhone15,2"`.
    package var deviceType: String
    package var locale: DeviceLocale
    /// Whether the device omits zero exit counters (most do).
    package var sparse: Bool
    package var isTestFlight: Bool
    /// Usage intensity, ~0.3…3 (launches, background work and crash odds scale with it).
    package var activity: Double
    /// Day offset (fractional) after each version's release when this device installs it.
    package var adoptionDelays: [Double]

    static let deviceTypes: [(String, Double)] = [
        ("iPhone12,1", 0.06), ("iPhone13,2", 0.08), ("iPhone14,5", 0.12), ("iPhone14,7", 0.10),
        ("iPhone15,2", 0.12), ("iPhone15,3", 0.07), ("iPhone15,4", 0.10), ("iPhone16,1", 0.10),
        ("iPhone16,2", 0.09), ("iPhone17,1", 0.06), ("iPhone17,3", 0.05), ("iPad13,18", 0.03),
        ("iPad14,3", 0.02),
    ]

    /// Draws device `index` of a population from its own random stream.
    init(index: Int, config: SimulationConfig) {
        var rng = SplitMix64(seed: config.seed, stream: [UInt64(index), 0xDE71CE])
        self.index = index
        os = rng.weighted(OSRelease.mix)
        deviceType = rng.weighted(Self.deviceTypes)
        locale = rng.weighted(DeviceLocale.mix)
        sparse = rng.chance(0.8)
        isTestFlight = rng.chance(0.01)
        activity = 0.3 + 2.7 * pow(rng.unit(), 2)
        adoptionDelays = config.versions.indices.map { _ in
            let laggard = rng.chance(0.08)
            return -log(max(rng.unit(), 1e-9)) * 1.2 + (laggard ? 60 : 0)
        }
    }

    /// The index (into `versions`) of the app version the device runs on simulated day `day`
    /// (0-based from the start); version `k` is released on day `k × days / versions`.
    func versionIndex(day: Int, config: SimulationConfig) -> Int {
        var current = 0
        let count = config.versions.count
        for k in 1..<max(count, 1) {
            let release = Double(k * config.days / count)
            if Double(day) + 1 > release + adoptionDelays[k] { current = k }
        }
        return current
    }
}
