/// App Store Connect's power and performance metrics response (`xcodeMetrics`, content type
/// `application/vnd.apple.xcode-metrics+json`), as `GET /v1/apps/{id}/perfPowerMetrics` answers,
/// so a tool written for App Store Connect can read a self-hosted Lifeline unchanged.
///
/// Field names and nesting are Apple's, from
/// https://developer.apple.com/documentation/appstoreconnectapi/xcodemetrics (objects
/// `xcodeMetrics.ProductData.MetricCategories.Metrics.Datasets…`), the example response of
/// https://developer.apple.com/documentation/appstoreconnectapi/get-v1-apps-_id_-perfpowermetrics
/// and https://developer.apple.com/documentation/appstoreconnectapi/metricsinsight. Every field is
/// optional as in Apple's schema; a `nil` field is left out of the JSON.
package struct XcodeMetrics: Codable, Sendable, Equatable {
    package var version: String?
    package var insights: Insights?
    package var productData: [ProductData]?

    package init(version: String? = "1.0.0", insights: Insights? = nil, productData: [ProductData]? = nil) {
        self.version = version
        self.insights = insights
        self.productData = productData
    }

    /// The content type of the response.
    package static let contentType = "application/vnd.apple.xcode-metrics+json"

    /// `insights`: regressions and metrics trending up.
    package struct Insights: Codable, Sendable, Equatable {
        package var trendingUp: [MetricsInsight]?
        package var regressions: [MetricsInsight]?

        package init(trendingUp: [MetricsInsight]? = [], regressions: [MetricsInsight]? = []) {
            self.trendingUp = trendingUp
            self.regressions = regressions
        }
    }

    /// `productData[]`: the metrics of one platform.
    package struct ProductData: Codable, Sendable, Equatable {
        package var platform: String?
        package var metricCategories: [MetricCategory]?

        package init(platform: String? = "iOS", metricCategories: [MetricCategory]? = nil) {
            self.platform = platform
            self.metricCategories = metricCategories
        }
    }

    /// `metricCategories[]`: one category (`identifier`: `LAUNCH`, `HANG`…) and its metrics.
    package struct MetricCategory: Codable, Sendable, Equatable {
        package var identifier: MetricCategoryIdentifier?
        package var metrics: [Metric]?

        package init(identifier: MetricCategoryIdentifier?, metrics: [Metric]? = nil) {
            self.identifier = identifier
            self.metrics = metrics
        }
    }

    /// `metrics[]`: one metric (`identifier`, e.g. `launchTime`), its unit, goal keys and datasets.
    package struct Metric: Codable, Sendable, Equatable {
        package var identifier: String?
        package var goalKeys: [GoalKey]?
        package var unit: Unit?
        package var datasets: [Dataset]?

        package init(identifier: String?, goalKeys: [GoalKey]? = nil, unit: Unit? = nil, datasets: [Dataset]? = nil) {
            self.identifier = identifier
            self.goalKeys = goalKeys
            self.unit = unit
            self.datasets = datasets
        }
    }

    /// `goalKeys[]`: a goal classification and the bounds of its values.
    package struct GoalKey: Codable, Sendable, Equatable {
        package var goalKey: String?
        package var lowerBound: Double?
        package var upperBound: Double?

        package init(goalKey: String?, lowerBound: Double? = nil, upperBound: Double? = nil) {
            self.goalKey = goalKey
            self.lowerBound = lowerBound
            self.upperBound = upperBound
        }
    }

    /// `unit`: `{"identifier": "milliseconds", "displayName": "ms"}`.
    package struct Unit: Codable, Sendable, Equatable {
        package var identifier: String?
        package var displayName: String?

        package init(identifier: String?, displayName: String?) {
            self.identifier = identifier
            self.displayName = displayName
        }
    }

    /// `datasets[]`: the points of one population (device, percentile) across versions.
    package struct Dataset: Codable, Sendable, Equatable {
        package var filterCriteria: FilterCriteria?
        package var points: [Point]?
        package var recommendedMetricGoal: RecommendedMetricGoal?

        package init(
            filterCriteria: FilterCriteria?, points: [Point]? = nil, recommendedMetricGoal: RecommendedMetricGoal? = nil
        ) {
            self.filterCriteria = filterCriteria
            self.points = points
            self.recommendedMetricGoal = recommendedMetricGoal
        }
    }

    /// `filterCriteria`: `percentile` (`percentile.fifty`, `percentile.ninety`), `device`
    /// (`all_iphones`, `all_ipads`) and its marketing name.
    package struct FilterCriteria: Codable, Sendable, Equatable {
        package var percentile: String?
        package var device: String?
        package var deviceMarketingName: String?

        package init(percentile: String?, device: String?, deviceMarketingName: String? = nil) {
            self.percentile = percentile
            self.device = device
            self.deviceMarketingName = deviceMarketingName
        }
    }

    /// `points[]`: the value of one version.
    package struct Point: Codable, Sendable, Equatable {
        package var version: String?
        package var value: Double?
        package var errorMargin: Double?
        package var percentageBreakdown: PercentageBreakdown?
        package var goal: String?

        package init(
            version: String?, value: Double?, errorMargin: Double? = nil,
            percentageBreakdown: PercentageBreakdown? = nil, goal: String? = nil
        ) {
            self.version = version
            self.value = value
            self.errorMargin = errorMargin
            self.percentageBreakdown = percentageBreakdown
            self.goal = goal
        }
    }

    /// `percentageBreakdown`: the share of a subsystem in a point's value.
    package struct PercentageBreakdown: Codable, Sendable, Equatable {
        package var value: Double?
        package var subSystemLabel: String?

        package init(value: Double?, subSystemLabel: String?) {
            self.value = value
            self.subSystemLabel = subSystemLabel
        }
    }

    /// `recommendedMetricGoal`: a recommended value and its explanation.
    package struct RecommendedMetricGoal: Codable, Sendable, Equatable {
        package var value: Double?
        package var detail: String?

        package init(value: Double?, detail: String?) {
            self.value = value
            self.detail = detail
        }
    }

    /// Apple's percentile strings: `percentile.fifty` for 0.5, `percentile.ninety` for 0.9; `nil`
    /// for any other (Apple names no other).
    package static func percentileName(_ q: Double) -> String? {
        switch q {
        case 0.5: "percentile.fifty"
        case 0.9: "percentile.ninety"
        default: nil
        }
    }
}

/// App Store Connect's `MetricCategory`: the values of `metricCategories[].identifier`,
/// `MetricsInsight.metricCategory` and `filter[metricType]`.
package enum MetricCategoryIdentifier: String, Codable, Sendable, Equatable, CaseIterable {
    case hang = "HANG"
    case launch = "LAUNCH"
    case memory = "MEMORY"
    case disk = "DISK"
    case battery = "BATTERY"
    case termination = "TERMINATION"
    case animation = "ANIMATION"
}

/// App Store Connect's `MetricsInsight`: one metric of the latest version against the average of
/// its reference versions (https://developer.apple.com/documentation/appstoreconnectapi/metricsinsight).
///
/// `referenceVersions` is a string in Apple's published schema but an array in its example
/// response; Lifeline follows the schema and writes the versions comma-separated ("1.0, 1.1").
package struct MetricsInsight: Codable, Sendable, Equatable {
    package var metricCategory: MetricCategoryIdentifier?
    package var metric: String?
    package var latestVersion: String?
    package var summaryString: String?
    package var referenceVersions: String?
    package var maxLatestVersionValue: Double?
    package var subSystemLabel: String?
    package var highImpact: Bool?
    package var populations: [Population]?

    package init(
        metricCategory: MetricCategoryIdentifier?, metric: String?, latestVersion: String?,
        summaryString: String? = nil, referenceVersions: String? = nil, maxLatestVersionValue: Double? = nil,
        subSystemLabel: String? = nil, highImpact: Bool? = nil, populations: [Population]? = nil
    ) {
        self.metricCategory = metricCategory
        self.metric = metric
        self.latestVersion = latestVersion
        self.summaryString = summaryString
        self.referenceVersions = referenceVersions
        self.maxLatestVersionValue = maxLatestVersionValue
        self.subSystemLabel = subSystemLabel
        self.highImpact = highImpact
        self.populations = populations
    }

    /// `populations[]`: one device and percentile.
    package struct Population: Codable, Sendable, Equatable {
        package var deltaPercentage: Double?
        package var percentile: String?
        package var summaryString: String?
        package var referenceAverageValue: Double?
        package var latestVersionValue: Double?
        package var device: String?

        package init(
            deltaPercentage: Double?, percentile: String?, summaryString: String? = nil,
            referenceAverageValue: Double?, latestVersionValue: Double?, device: String?
        ) {
            self.deltaPercentage = deltaPercentage
            self.percentile = percentile
            self.summaryString = summaryString
            self.referenceAverageValue = referenceAverageValue
            self.latestVersionValue = latestVersionValue
            self.device = device
        }
    }

    /// Apple's insight for Lifeline ``Insight``s of one metric and device (one per percentile,
    /// all with the same versions): populations for the percentiles Apple names, `highImpact` if
    /// any is, `maxLatestVersionValue` the largest latest value. `nil` without such a percentile.
    package init?(
        category: MetricCategoryIdentifier, device: String, deviceName: String, insights: [Insight]
    ) {
        let named = insights.compactMap { insight -> (Insight, String)? in
            XcodeMetrics.percentileName(insight.percentile).map { (insight, $0) }
        }
        guard let first = named.first?.0 else { return nil }
        let populations = named.map { insight, name in
            Population(
                deltaPercentage: insight.deltaPercentage.map { ($0 * 100).rounded() / 100 }, percentile: name,
                summaryString: insight.deltaPercentage.map { Self.change($0) + " across \(deviceName)" },
                referenceAverageValue: insight.referenceValue, latestVersionValue: insight.latestValue,
                device: device)
        }
        self.init(
            metricCategory: category, metric: first.metric, latestVersion: first.latestVersion,
            summaryString: nil, referenceVersions: first.referenceVersions.joined(separator: ", "),
            maxLatestVersionValue: named.compactMap(\.0.latestValue).max(), subSystemLabel: nil,
            highImpact: named.contains { $0.0.highImpact }, populations: populations)
        let deltas = named.compactMap(\.0.deltaPercentage)
        if let low = deltas.min(), let high = deltas.max(), let firstVersion = first.referenceVersions.first {
            let range =
                low.rounded() == high.rounded() ? Self.percent(low) : "\(Self.percent(low)) to \(Self.percent(high))"
            summaryString =
                "\(first.metric) \(high >= 0 ? "increased" : "decreased") \(range) between app versions "
                + "\(firstVersion) to \(first.latestVersion) on \(deviceName), compared to the average for "
                + "previous \(first.referenceVersions.count) app versions."
        }
    }

    private static func percent(_ delta: Double) -> String {
        delta.isFinite ? "\(Int(min(abs(delta), 1e9).rounded()))%" : "∞%"
    }

    private static func change(_ delta: Double) -> String {
        (delta >= 0 ? "Increased " : "Decreased ") + percent(delta)
    }
}
