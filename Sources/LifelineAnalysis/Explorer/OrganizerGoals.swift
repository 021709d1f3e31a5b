import LifelineModel

/// Where a value sits against Organizer's published bands.
package enum Goal: String, Sendable, Equatable, Codable {
    case good
    case fair
    case poor
}

/// Good / fair / poor thresholds of one metric, as Apple publishes them.
package struct GoalBand: Sendable, Equatable {
    /// The unit of the thresholds (and of the values compared with them).
    package var unit: MeasurementUnit
    /// Good up to this value.
    package var goodLimit: Double
    /// Whether a value equal to ``goodLimit`` is still good ("at or below") or already fair
    /// ("less than").
    package var goodIncludesLimit: Bool
    /// Fair up to and including this value; poor above it.
    package var fairLimit: Double
    /// Where Apple publishes the band.
    package var source: String

    /// The goal of `value` (in ``unit``); `nil` for NaN.
    package func goal(of value: Double) -> Goal? {
        guard !value.isNaN else { return nil }
        if value < goodLimit || (goodIncludesLimit && value == goodLimit) { return .good }
        return value <= fairLimit ? .fair : .poor
    }
}

/// Organizer's goal bands, by Lifeline metric name (`section.key` as the decoders name scalars).
///
/// Only bands Apple publishes are here; every other metric has no goal (`nil`), and the explorer
/// shows `goal: null` rather than a threshold nobody at Apple stated. Apple's launch guidance
/// ("Reducing your app's launch time": draw the first frame within 400 ms) is a single target,
/// not a set of bands, and hangs, memory, disk writes, battery and terminations have no published
/// bands, so none of them has a goal.
package enum OrganizerGoals {
    /// Scroll hitch time ratio (`MXAnimationMetric.scrollHitchTimeRatio`, iOS 14+): under 5 ms/s
    /// good, 5–10 ms/s a warning, above 10 ms/s critical, from WWDC20 session 10077 "Eliminate
    /// animation hitches with XCTest" (https://developer.apple.com/videos/play/wwdc2020/10077/).
    package static let scrollHitchTimeRatio = GoalBand(
        unit: .millisecondsPerSecond, goodLimit: 5, goodIncludesLimit: false, fairLimit: 10,
        source: "https://developer.apple.com/videos/play/wwdc2020/10077/")

    /// The Hitches metric of all tracked animations (`MXAnimationMetric.hitchTimeRatio`, iOS 26;
    /// `hitchTimeMetric.ratio` in 2.0.0 reports): "A hitch rate at or below 10 ms/s is good; at or
    /// below 25 ms/s is a warning; at or below 50 ms/s is critical; and above 50 ms/s warrants
    /// immediate attention" (https://developer.apple.com/documentation/xcode/understanding-hitches-in-your-app).
    /// Critical and immediate attention are both `poor` here.
    package static let hitchTimeRatio = GoalBand(
        unit: .millisecondsPerSecond, goodLimit: 10, goodIncludesLimit: true, fairLimit: 25,
        source: "https://developer.apple.com/documentation/xcode/understanding-hitches-in-your-app")

    /// Metric name → band.
    package static let bands: [String: GoalBand] = [
        "animationMetrics.scrollHitchTimeRatio": scrollHitchTimeRatio,
        "animationMetrics.hitchTimeRatio": hitchTimeRatio,
        "animationMetrics.ratio": hitchTimeRatio,
    ]

    /// The band of `metric`; `nil` where Apple publishes none.
    package static func band(for metric: String) -> GoalBand? { bands[metric] }

    /// The goal of `value` of `metric`; `nil` where Apple publishes no band.
    package static func goal(for metric: String, value: Double) -> Goal? {
        band(for: metric)?.goal(of: value)
    }
}
