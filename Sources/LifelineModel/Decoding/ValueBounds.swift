/// What a device can plausibly report in one MetricKit document. A value outside these bounds is
/// dropped by the decoder (counted in ``DecodedDocument/droppedValues``, kept in the raw document)
/// instead of being summed into a figure, so one hostile document cannot overflow a total, blank a
/// percentile or make a report trap.
///
/// The bounds are far above anything real (a daily payload) and far below where 64-bit sums of
/// millions of documents could overflow: 10⁶ exits × 10⁹ documents < 2⁶³.
package enum ValueBounds {
    /// Most exits of one reason and state in one document: one every ~86 ms for a whole day.
    package static let maxExitCount: Int64 = 1_000_000
    /// Most signpost intervals or histogram samples in one counter (one bucket, one total).
    package static let maxEventCount: Int64 = 1_000_000_000
    /// Earliest accepted timestamp: 2000-01-01T00:00:00Z (MetricKit began with iOS 13, 2019).
    package static let minEpochSeconds: Int64 = 946_684_800
    /// Latest accepted timestamp: 9999-12-30T00:00:00Z (four-digit years, one day of slack for zones).
    package static let maxEpochSeconds: Int64 = 253_402_128_000

    /// Whether an integer counter of exits is plausible.
    @inline(__always)
    package static func isPlausibleExitCount(_ count: Int64) -> Bool {
        count >= 0 && count <= maxExitCount
    }

    /// Whether an event counter (signpost total, bucket count, sample count) is plausible.
    @inline(__always)
    package static func isPlausibleEventCount(_ count: Int64) -> Bool {
        count >= 0 && count <= maxEventCount
    }

    /// Whether a timestamp (epoch seconds) is plausible.
    @inline(__always)
    package static func isPlausibleEpoch(_ seconds: Int64) -> Bool {
        seconds >= minEpochSeconds && seconds <= maxEpochSeconds
    }

    /// Whether a measured value in `unit` is plausible: finite, not negative, and at most
    /// ``maxMagnitude(_:)``.
    @inline(__always)
    package static func isPlausible(_ value: Double, unit: MeasurementUnit?) -> Bool {
        value.isFinite && value >= 0 && value <= maxMagnitude(unit)
    }

    /// The largest plausible value of a unit: durations up to 30 days (longer than any payload's
    /// window), sizes up to 1 PB, instructions up to 10¹⁸, ratios and percentages up to 10⁶,
    /// plain counts up to 10¹².
    package static func maxMagnitude(_ unit: MeasurementUnit?) -> Double {
        switch unit {
        case .milliseconds: return 30 * 86_400_000
        case .bytes: return 1e15
        case .instructions: return 1e18
        case .millisecondsPerSecond, .apl, .bars, .percent: return 1e6
        case .count, nil: return 1e12
        }
    }
}

extension Int64 {
    /// `self + other`, clamped to `Int64.min ... Int64.max` instead of trapping or wrapping: sums
    /// of stored counts use it, so data written before ``ValueBounds`` existed (or a database
    /// edited by hand) can never make a figure trap or turn negative.
    @inline(__always)
    package func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// Adds `other` in place, saturating (see ``addingSaturating(_:)``).
    @inline(__always)
    package mutating func addSaturating(_ other: Int64) {
        self = addingSaturating(other)
    }
}

extension Sequence where Element == Int64 {
    /// The saturating sum of the elements.
    package func saturatingSum() -> Int64 {
        reduce(0) { $0.addingSaturating($1) }
    }
}
