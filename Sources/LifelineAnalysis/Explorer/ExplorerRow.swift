/// The group keys of an explorer row (`group_by` any of `version`, `device`, `os`, `app_state`);
/// `nil` for a dimension not grouped by.
package struct ExplorerGroupKeys: Sendable, Equatable, Hashable {
    package var version: String?
    package var device: String?
    package var os: String?
    package var appState: String?

    package init(version: String? = nil, device: String? = nil, os: String? = nil, appState: String? = nil) {
        self.version = version
        self.device = device
        self.os = os
        self.appState = appState
    }
}

/// One row of `GET /v1/apps/{bundleId}/metrics`: a metric's figures over a merged cell.
///
/// **Figures.** `p50`/`p90`: for a histogram metric, linear interpolation inside the merged buckets
/// (``BucketDistribution/percentile(_:)``); for a per-device-day value or rate, the sketch's quantile
/// across device-days (the element of rank `⌊q (n − 1)⌋`, within 1 % relative error).
/// `mean`: the pooled mean (``RatioMoments/ratio``): the mean over device-days of a value, the
/// pooled rate `Σ numerator / Σ hours` of a rate, the mean of all samples (bucket midpoints) of a
/// histogram.
///
/// **`error_margin`** is the half-width of the 95 % confidence interval of `mean`, `1.96 × SE`, with
/// the standard error taken over device-days (``RatioMoments/standardError``), in the metric's unit.
/// It measures sampling error across device-days; the sketch's own error (≤ 1 % of a percentile)
/// and the bucket width of a histogram come on top for the percentiles.
/// `p50_error_margin`/`p90_error_margin` are the half-widths of distribution-free 95 % intervals of
/// the percentiles (order statistics at ranks `n q ± 1.96 √(n q (1 − q))` over device-days; for a
/// histogram read at `q ± 1.96 √(q (1 − q) / n)` with `n` the device-days, treating a device-day as
/// the independent unit).
///
/// **`insufficient_data`** is true below ``minimumDeviceDays`` (50) device-days; then `p50`, `p90`,
/// `mean`, every margin and `goal` are `null`, and only `device_days` is given. At 50 device-days
/// the 95 % interval of the p90 spans ranks 40–49, and the mean's interval rests on 50 independent
/// device-days.
///
/// **`goal`** is Organizer's band applied to `p50` (Organizer's "typical" view), `null` where Apple
/// publishes no band.
package struct ExplorerRow: Sendable, Equatable, Codable {
    /// Fewest device-days a row needs to show figures.
    package static let minimumDeviceDays: UInt64 = 50
    /// z of a two-sided 95 % interval.
    package static let z95 = 1.959_963_984_540_054

    package var category: ExplorerCategory
    package var metric: String
    package var unit: ExplorerUnit
    /// The series inside the metric (a signpost's `category/name`); `nil` for a metric with one series.
    package var subject: String?
    package var version: String?
    package var device: String?
    package var os: String?
    package var appState: String?
    package var p50: Double?
    package var p90: Double?
    package var mean: Double?
    package var deviceDays: UInt64
    package var errorMargin: Double?
    package var p50ErrorMargin: Double?
    package var p90ErrorMargin: Double?
    package var goal: Goal?
    package var insufficientData: Bool

    enum CodingKeys: String, CodingKey {
        case category, metric, unit, subject, version, device, os
        case appState = "app_state"
        case p50, p90, mean
        case deviceDays = "device_days"
        case errorMargin = "error_margin"
        case p50ErrorMargin = "p50_error_margin"
        case p90ErrorMargin = "p90_error_margin"
        case goal
        case insufficientData = "insufficient_data"
    }

    /// The group keys of this row.
    package var groups: ExplorerGroupKeys {
        ExplorerGroupKeys(version: version, device: device, os: os, appState: appState)
    }

    /// The row of `metric` over the merged `cell`.
    package init(
        metric: ExplorerMetric, cell: ExplorerCell, groups: ExplorerGroupKeys = .init(), subject: String? = nil,
        minimumDeviceDays: UInt64 = ExplorerRow.minimumDeviceDays
    ) {
        category = metric.category
        self.metric = metric.id
        unit = metric.unit
        self.subject = subject.flatMap { $0.isEmpty ? nil : $0 }
        version = groups.version
        device = groups.device
        os = groups.os
        appState = groups.appState
        deviceDays = cell.deviceDays
        insufficientData = cell.deviceDays < Swift.max(minimumDeviceDays, 1)
        guard !insufficientData else { return }
        let n = Double(cell.deviceDays)
        switch metric.kind {
        case .histogram:
            let distribution = cell.distribution
            p50 = distribution.percentile(0.5)
            p90 = distribution.percentile(0.9)
            p50ErrorMargin = Self.histogramMargin(distribution, 0.5, n)
            p90ErrorMargin = Self.histogramMargin(distribution, 0.9, n)
        case .deviceDayValue, .ratePerForegroundHour:
            p50 = cell.sketch.quantile(0.5)
            p90 = cell.sketch.quantile(0.9)
            p50ErrorMargin = Self.sketchMargin(cell.sketch, 0.5)
            p90ErrorMargin = Self.sketchMargin(cell.sketch, 0.9)
        }
        mean = cell.moments.ratio
        errorMargin = cell.moments.standardError.map { $0 * Self.z95 }
        if let p50, let band = metric.goalBand { goal = band.goal(of: p50) }
    }

    /// Half the distance between the order statistics bounding a 95 % interval of the `q`-quantile.
    static func sketchMargin(_ sketch: QuantileSketch, _ q: Double) -> Double? {
        let n = Double(sketch.count)
        guard n >= 2 else { return nil }
        let spread = z95 * (n * q * (1 - q)).squareRoot()
        let centre = q * (n - 1)
        let low = Swift.max(0, (centre - spread).rounded(.down))
        let high = Swift.min(n - 1, (centre + spread).rounded(.up))
        let width = sketch.value(atRank: UInt64(high)) - sketch.value(atRank: UInt64(low))
        return width / 2
    }

    /// Half the distance between the histogram's quantiles at `q ± 1.96 √(q (1 − q) / n)`.
    static func histogramMargin(_ distribution: BucketDistribution, _ q: Double, _ n: Double) -> Double? {
        guard n >= 2 else { return nil }
        let spread = z95 * (q * (1 - q) / n).squareRoot()
        guard let low = distribution.percentile(Swift.max(0, q - spread)),
            let high = distribution.percentile(Swift.min(1, q + spread))
        else { return nil }
        return (high - low) / 2
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        category = try c.decode(ExplorerCategory.self, forKey: .category)
        metric = try c.decode(String.self, forKey: .metric)
        unit = try c.decode(ExplorerUnit.self, forKey: .unit)
        subject = try c.decodeIfPresent(String.self, forKey: .subject)
        version = try c.decodeIfPresent(String.self, forKey: .version)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        os = try c.decodeIfPresent(String.self, forKey: .os)
        appState = try c.decodeIfPresent(String.self, forKey: .appState)
        p50 = try c.decodeIfPresent(Double.self, forKey: .p50)
        p90 = try c.decodeIfPresent(Double.self, forKey: .p90)
        mean = try c.decodeIfPresent(Double.self, forKey: .mean)
        deviceDays = try c.decode(UInt64.self, forKey: .deviceDays)
        errorMargin = try c.decodeIfPresent(Double.self, forKey: .errorMargin)
        p50ErrorMargin = try c.decodeIfPresent(Double.self, forKey: .p50ErrorMargin)
        p90ErrorMargin = try c.decodeIfPresent(Double.self, forKey: .p90ErrorMargin)
        goal = try c.decodeIfPresent(Goal.self, forKey: .goal)
        insufficientData = try c.decode(Bool.self, forKey: .insufficientData)
    }

    /// Group keys and `subject` only when present; every figure always, `null` when absent, so the
    /// same figure has the same name and the same `null` everywhere.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(category, forKey: .category)
        try c.encode(metric, forKey: .metric)
        try c.encode(unit, forKey: .unit)
        try c.encodeIfPresent(subject, forKey: .subject)
        try c.encodeIfPresent(version, forKey: .version)
        try c.encodeIfPresent(device, forKey: .device)
        try c.encodeIfPresent(os, forKey: .os)
        try c.encodeIfPresent(appState, forKey: .appState)
        try c.encode(p50, forKey: .p50)
        try c.encode(p90, forKey: .p90)
        try c.encode(mean, forKey: .mean)
        try c.encode(deviceDays, forKey: .deviceDays)
        try c.encode(errorMargin, forKey: .errorMargin)
        try c.encode(p50ErrorMargin, forKey: .p50ErrorMargin)
        try c.encode(p90ErrorMargin, forKey: .p90ErrorMargin)
        try c.encode(goal, forKey: .goal)
        try c.encode(insufficientData, forKey: .insufficientData)
    }
}
