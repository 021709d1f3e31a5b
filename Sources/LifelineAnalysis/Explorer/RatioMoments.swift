import Foundation

/// Mergeable moments of pairs `(x, y)`, one pair per device-day, for a pooled ratio `R = Σy / Σx` and
/// its standard error over device-days: the bivariate form of ``Moments``.
///
/// What the pairs are: for a per-device-day value `v`, `(1, v)` (then `R` is the plain mean); for a
/// rate, `(hours, numerator)` (then `R` is the pooled rate, e.g. seconds hung per foreground hour);
/// for a histogram, `(sample count, Σ midpoint × count)` (then `R` is the pooled sample mean).
///
/// The state is `n`, the means `x̄`, `ȳ` and the co-moments `Cxx = Σ(x − x̄)²`, `Cyy`, `Cxy`; two
/// states merge with Chan, Golub & LeVeque's pairwise update (exact up to rounding, independent of
/// the grouping), which keeps the residual sum below free of the cancellation of raw power sums.
///
/// **Standard error** (the ratio estimator's linearisation, Cochran, *Sampling Techniques* §6.4):
/// `SE(R) = √(Σ(yᵢ − R xᵢ)² / (n (n − 1))) / x̄` with `Σ(yᵢ − R xᵢ)² = Cyy − 2R Cxy + R² Cxx`
/// (since `ȳ = R x̄`). With `x ≡ 1` it is the familiar `s / √n`. The device-day is the independent
/// unit: the samples inside one payload's histogram are not independent draws.
package struct RatioMoments: Sendable, Equatable {
    /// Pairs (device-days) folded.
    package private(set) var count: Double = 0
    package private(set) var meanX: Double = 0
    package private(set) var meanY: Double = 0
    package private(set) var cxx: Double = 0
    package private(set) var cyy: Double = 0
    package private(set) var cxy: Double = 0

    /// An empty state.
    package init() {}

    /// One pair; an empty state when either is not finite.
    package init(x: Double, y: Double) {
        guard x.isFinite, y.isFinite else { return }
        count = 1
        meanX = x
        meanY = y
    }

    /// Adds one pair.
    package mutating func add(x: Double, y: Double) {
        merge(RatioMoments(x: x, y: y))
    }

    /// Folds `other` into this state.
    package mutating func merge(_ other: RatioMoments) {
        guard other.count > 0 else { return }
        guard count > 0 else {
            self = other
            return
        }
        let n = count + other.count
        let dx = other.meanX - meanX
        let dy = other.meanY - meanY
        let weight = count * other.count / n
        meanX += dx * other.count / n
        meanY += dy * other.count / n
        cxx = Self.finite(cxx + other.cxx + dx * dx * weight)
        cyy = Self.finite(cyy + other.cyy + dy * dy * weight)
        cxy = Self.finite(cxy + other.cxy + dx * dy * weight)
        count = n
    }

    /// `x` clamped to ±`Double.greatestFiniteMagnitude` (NaN, from ∞ − ∞, as 0), so a state always
    /// encodes to bytes its decoder accepts: co-moments of values past ~10^154 saturate (no MetricKit
    /// figure comes near), as ``QuantileSketch``'s sum does.
    private static func finite(_ x: Double) -> Double {
        x.isNaN ? 0 : Swift.min(Swift.max(x, -.greatestFiniteMagnitude), .greatestFiniteMagnitude)
    }

    /// `Σy / Σx`; `nil` when empty or `Σx` is 0.
    package var ratio: Double? {
        guard count > 0, meanX > 0 else { return nil }
        return meanY / meanX
    }

    /// The standard error of ``ratio`` over the pairs; `nil` with fewer than 2 pairs or no ratio.
    package var standardError: Double? {
        guard count >= 2, let r = ratio else { return nil }
        let residual = Swift.max(0, cyy - 2 * r * cxy + r * r * cxx)
        let se = (residual / (count * (count - 1))).squareRoot() / meanX
        return se.isFinite ? se : nil
    }

    /// Rebuilds a state from its six checked doubles, in their stored order (decoding): finite,
    /// `n ≥ 0`, `Cxx, Cyy ≥ 0`, all 0 when `n` is 0.
    init(
        checkedCount n: Double, meanX: Double, meanY: Double, cxx: Double, cyy: Double, cxy: Double
    ) throws(SketchDecodingError) {
        guard n.isFinite, meanX.isFinite, meanY.isFinite, cxx.isFinite, cyy.isFinite, cxy.isFinite,
            n >= 0, cxx >= 0, cyy >= 0
        else { throw .invalid("ratio moments not finite or negative") }
        guard n > 0 || (meanX == 0 && meanY == 0 && cxx == 0 && cyy == 0 && cxy == 0) else {
            throw .invalid("empty ratio moments with values")
        }
        count = n
        self.meanX = meanX
        self.meanY = meanY
        self.cxx = cxx
        self.cyy = cyy
        self.cxy = cxy
    }
}
