/// The insights of one explorer metric and device population, for ``PerfPowerMetricsBuilder``.
package struct PerfPowerInsightGroup: Sendable, Equatable {
    /// ``ExplorerMetric/id``.
    package var metric: String
    /// The Lifeline device key (`nil`: every device).
    package var device: String?
    /// ``InsightEngine/evaluate(metric:population:direction:latest:references:configuration:)``'s
    /// answer (one per percentile).
    package var insights: [Insight]

    package init(metric: String, device: String?, insights: [Insight]) {
        self.metric = metric
        self.device = device
        self.insights = insights
    }
}

/// Builds App Store Connect's `perfPowerMetrics` answer (``XcodeMetrics``) from explorer rows
/// grouped by version (and optionally device) and the insights.
///
/// - `productData[0]` is the platform; its `metricCategories` follow the catalog's category order,
///   each metric with its ``ExplorerMetric/appleIdentifier``, `unit` and `goalKeys` (from its
///   Organizer band, when Apple publishes one).
/// - One dataset per device and percentile (`percentile.fifty` from `p50`, `percentile.ninety` from
///   `p90`), `filterCriteria.device` from ``deviceCriteria(_:)``.
/// - One point per version, in `versions` order (default: first appearance): `value`, `errorMargin`
///   (the percentile's 95 % half-width, ``ExplorerRow/p50ErrorMargin``), `goal` (the band's
///   `good`/`fair`/`poor` of that value). Rows with `insufficient_data`, without a version, or of a
///   per-signpost series (Apple has none) give no point.
/// - `insights.regressions` / `trendingUp`: one ``MetricsInsight`` per group with a regression (or,
///   failing that, a trend) among its percentiles.
package enum PerfPowerMetricsBuilder {
    /// Apple's `device` filter and marketing name for a Lifeline device key: `nil` → every device
    /// (`all`), `iphone`/`all_iphones` → `all_iphones`, `ipad`/`all_ipads` → `all_ipads`, any other
    /// key (a model identifier such as `iPhone15,2`) as itself.
    package static func deviceCriteria(_ device: String?) -> (device: String, marketingName: String) {
        switch device?.lowercased() {
        case nil, "", "all": ("all", "All devices")
        case "iphone", "all_iphones": ("all_iphones", "All iPhones")
        case "ipad", "all_ipads": ("all_ipads", "All iPads")
        default: (device ?? "", device ?? "")
        }
    }

    /// Apple's unit object of an explorer unit.
    package static func unit(_ unit: ExplorerUnit) -> XcodeMetrics.Unit {
        switch unit {
        case .milliseconds: .init(identifier: "milliseconds", displayName: "ms")
        case .bytes: .init(identifier: "bytes", displayName: "B")
        case .instructions: .init(identifier: "instructions", displayName: "instructions")
        case .millisecondsPerSecond: .init(identifier: "millisecondsPerSecond", displayName: "ms per s")
        case .apl: .init(identifier: "averagePixelLuminance", displayName: "APL")
        case .bars: .init(identifier: "bars", displayName: "bars")
        case .secondsPerHour: .init(identifier: "secondsPerHour", displayName: "s/hr")
        case .exitsPerDeviceDay: .init(identifier: "exitsPerDay", displayName: "per day")
        case .exitsPerHour: .init(identifier: "exitsPerHour", displayName: "per hr")
        }
    }

    /// `goalKeys` of a band: good from 0 to the good limit, fair to the fair limit, poor above.
    package static func goalKeys(_ band: GoalBand?) -> [XcodeMetrics.GoalKey]? {
        guard let band else { return nil }
        return [
            .init(goalKey: Goal.good.rawValue, lowerBound: 0, upperBound: band.goodLimit),
            .init(goalKey: Goal.fair.rawValue, lowerBound: band.goodLimit, upperBound: band.fairLimit),
            .init(goalKey: Goal.poor.rawValue, lowerBound: band.fairLimit, upperBound: nil),
        ]
    }

    /// The whole answer.
    package static func build(
        rows: [ExplorerRow], insights: [PerfPowerInsightGroup] = [], versions: [String]? = nil,
        platform: String = "iOS"
    ) -> XcodeMetrics {
        var order = versions ?? []
        for row in rows {
            if let version = row.version, !order.contains(version) { order.append(version) }
        }
        let rank = Dictionary(order.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let usable = rows.filter { $0.version != nil && $0.subject == nil && !$0.insufficientData }
        let byMetric = Dictionary(grouping: usable, by: \.metric)
        var categories: [XcodeMetrics.MetricCategory] = []
        for category in ExplorerCategory.allCases {
            let metrics = ExplorerCatalog.metrics(in: category).compactMap { metric -> XcodeMetrics.Metric? in
                guard let metricRows = byMetric[metric.id] else { return nil }
                return XcodeMetrics.Metric(
                    identifier: metric.appleIdentifier, goalKeys: goalKeys(metric.goalBand), unit: unit(metric.unit),
                    datasets: datasets(metric, metricRows, rank))
            }
            if !metrics.isEmpty {
                categories.append(XcodeMetrics.MetricCategory(identifier: category.appleIdentifier, metrics: metrics))
            }
        }
        var regressions: [MetricsInsight] = []
        var trending: [MetricsInsight] = []
        for group in insights {
            guard let metric = ExplorerCatalog.metric(group.metric) else { continue }
            let criteria = deviceCriteria(group.device)
            guard
                var insight = MetricsInsight(
                    category: metric.category.appleIdentifier, device: criteria.device,
                    deviceName: criteria.marketingName, insights: group.insights)
            else { continue }
            insight.metric = metric.appleIdentifier
            if group.insights.contains(where: { $0.classification == .regression }) {
                regressions.append(insight)
            } else if group.insights.contains(where: { $0.classification == .trendingUp }) {
                trending.append(insight)
            }
        }
        return XcodeMetrics(
            insights: .init(trendingUp: trending, regressions: regressions),
            productData: [.init(platform: platform, metricCategories: categories)])
    }

    private static func datasets(
        _ metric: ExplorerMetric, _ rows: [ExplorerRow], _ rank: [String: Int]
    ) -> [XcodeMetrics.Dataset] {
        let devices = Dictionary(grouping: rows, by: \.device)
        return devices.keys.sorted { ($0 ?? "") < ($1 ?? "") }.flatMap { device -> [XcodeMetrics.Dataset] in
            let criteria = deviceCriteria(device)
            let ordered = (devices[device] ?? []).sorted {
                rank[$0.version ?? "", default: .max] < rank[$1.version ?? "", default: .max]
            }
            let percentiles: [(q: Double, value: (ExplorerRow) -> Double?, margin: (ExplorerRow) -> Double?)] = [
                (0.5, \.p50, \.p50ErrorMargin), (0.9, \.p90, \.p90ErrorMargin),
            ]
            return percentiles.map { percentile in
                let points = ordered.compactMap { row -> XcodeMetrics.Point? in
                    guard let value = percentile.value(row) else { return nil }
                    return XcodeMetrics.Point(
                        version: row.version, value: value, errorMargin: percentile.margin(row),
                        goal: metric.goalBand?.goal(of: value)?.rawValue)
                }
                return XcodeMetrics.Dataset(
                    filterCriteria: .init(
                        percentile: XcodeMetrics.percentileName(percentile.q), device: criteria.device,
                        deviceMarketingName: criteria.marketingName),
                    points: points)
            }
        }
    }
}
