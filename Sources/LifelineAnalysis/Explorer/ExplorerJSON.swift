/// The JSON of the insights answer (`GET /v1/apps/{bundleId}/insights`, the report's JSON).
package struct InsightsBody: Encodable, Sendable {
    /// One insight (snake_case keys; every figure always present, `null` when absent or not finite).
    package struct Row: Encodable, Sendable {
        var category: String
        var metric: String
        var unit: String
        var subject: String?
        /// `null`: every device; otherwise one device type.
        var device: String?
        var percentile: Int
        var latestValue: Double?
        var referenceValue: Double?
        var deltaPercentage: Double?
        var confidenceInterval: [Double?]?
        var highImpact: Bool
        var classification: String
        var latestDeviceDays: UInt64
        var referenceDeviceDays: UInt64

        package init(_ entry: InsightsAnswer.Entry) {
            let insight = entry.insight
            category = entry.metric.category.rawValue
            metric = entry.metric.id
            unit = entry.metric.unit.rawValue
            subject = entry.subject.isEmpty ? nil : entry.subject
            device = entry.device.isEmpty ? nil : entry.device
            percentile = Int((insight.percentile * 100).rounded())
            latestValue = Self.finite(insight.latestValue)
            referenceValue = Self.finite(insight.referenceValue)
            deltaPercentage = Self.finite(insight.deltaPercentage)
            confidenceInterval = insight.confidenceInterval.map { [Self.finite($0.lower), Self.finite($0.upper)] }
            highImpact = insight.highImpact
            classification = insight.classification.rawValue
            latestDeviceDays = insight.latestDeviceDays
            referenceDeviceDays = insight.referenceDeviceDays
        }

        static func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }

        enum CodingKeys: String, CodingKey {
            case category, metric, unit, subject, device, percentile, classification
            case latestValue = "latest_value"
            case referenceValue = "reference_value"
            case deltaPercentage = "delta_percentage"
            case confidenceInterval = "confidence_interval"
            case highImpact = "high_impact"
            case latestDeviceDays = "latest_device_days"
            case referenceDeviceDays = "reference_device_days"
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(category, forKey: .category)
            try c.encode(metric, forKey: .metric)
            try c.encode(unit, forKey: .unit)
            try c.encodeIfPresent(subject, forKey: .subject)
            try c.encode(device, forKey: .device)
            try c.encode(percentile, forKey: .percentile)
            try c.encode(latestValue, forKey: .latestValue)
            try c.encode(referenceValue, forKey: .referenceValue)
            try c.encode(deltaPercentage, forKey: .deltaPercentage)
            try c.encode(confidenceInterval, forKey: .confidenceInterval)
            try c.encode(highImpact, forKey: .highImpact)
            try c.encode(classification, forKey: .classification)
            try c.encode(latestDeviceDays, forKey: .latestDeviceDays)
            try c.encode(referenceDeviceDays, forKey: .referenceDeviceDays)
        }
    }

    var app: String
    var window: FigureJSON.Window
    var latestVersion: String?
    var referenceVersions: [String]
    var regressions: [Row]
    var trendingUp: [Row]
    var insufficientData: [Row]
    /// Insights with nothing to report (better, unchanged, below the threshold).
    var unchanged: [Row]

    package init(_ scope: Scope, _ answer: InsightsAnswer) {
        app = scope.app
        window = FigureJSON.Window(scope.days)
        latestVersion = answer.latest
        referenceVersions = answer.references
        var sorted: [InsightClassification: [Row]] = [:]
        for entry in answer.entries { sorted[entry.insight.classification, default: []].append(Row(entry)) }
        // The largest change first, as Organizer lists them.
        func ordered(_ rows: [Row]?) -> [Row] {
            (rows ?? []).sorted { ($0.deltaPercentage ?? -.infinity) > ($1.deltaPercentage ?? -.infinity) }
        }
        regressions = ordered(sorted[.regression])
        trendingUp = ordered(sorted[.trendingUp])
        insufficientData = sorted[.insufficientData] ?? []
        unchanged = sorted[.none] ?? []
    }

    enum CodingKeys: String, CodingKey {
        case app, window, regressions, unchanged
        case latestVersion = "latest_version"
        case referenceVersions = "reference_versions"
        case trendingUp = "trending_up"
        case insufficientData = "insufficient_data"
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(app, forKey: .app)
        try c.encode(window, forKey: .window)
        try c.encode(latestVersion, forKey: .latestVersion)
        try c.encode(referenceVersions, forKey: .referenceVersions)
        try c.encode(regressions, forKey: .regressions)
        try c.encode(trendingUp, forKey: .trendingUp)
        try c.encode(insufficientData, forKey: .insufficientData)
        try c.encode(unchanged, forKey: .unchanged)
    }
}
