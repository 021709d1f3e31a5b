import LifelineAnalysis

/// Writes a ``Measure`` in the canonical textual form ``QueryParser`` reads.
package enum QueryFormatter {
    /// The canonical text of `measure`.
    package static func format(_ measure: Measure) -> String {
        switch measure {
        case .deviceDays: return "device_days"
        case .exits(let state, let reason):
            return "exits" + matchers([("state", state?.rawValue), ("reason", reason)])
        case .exitRate(let state, let reason):
            return "exit_rate" + matchers([("state", state?.rawValue), ("reason", reason)])
        case .signposts(let category, let name):
            return "signposts" + matchers([("category", category), ("name", name)])
        case .diagnostics(let kind):
            return "diagnostics" + matchers([("kind", kind?.rawValue)])
        case .watchdogTerminations: return "watchdog_terminations"
        case .newCrashGroups: return "new_crash_groups"
        case .handlerImbalanceRatio: return "handler_imbalance_ratio"
        case .handlerImbalance: return "handler_imbalance"
        case .restorationErrorRate: return "restoration_error_rate"
        case .explorer(let metric, let statistic):
            return "explorer" + matchers([("metric", metric), ("stat", statistic.rawValue)])
        case .regression(let metric, let percentile):
            return "regression" + matchers([("metric", metric), ("percentile", number(percentile * 100))])
        case .percentile(let source, let quantile):
            return "percentile(\(format(source)), \(number(quantile)))"
        case .ratio(let numerator, let denominator):
            return "ratio(\(format(numerator)), \(format(denominator)))"
        case .scaled(let inner, let factor):
            return "scale(\(format(inner)), \(number(factor)))"
        }
    }

    /// The canonical text of a histogram source.
    package static func format(_ source: HistogramSource) -> String {
        if let alias = QueryParser.histogramAliases.first(where: { $0.source == source }) { return alias.alias }
        switch source {
        case .metric(let name): return "metric=\(quoted(name))"
        case .signpost(let category, let name):
            return "signpost" + matchers([("category", category), ("name", name)])
        }
    }

    private static func matchers(_ pairs: [(String, String?)]) -> String {
        let present = pairs.compactMap { name, value in value.map { "\(name)=\(quoted($0))" } }
        return present.isEmpty ? "" : "{" + present.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }

    /// A number without a trailing `.0` for integers.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
