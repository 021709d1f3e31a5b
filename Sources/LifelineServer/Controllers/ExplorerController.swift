import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel

/// The metrics explorer's endpoints (read key): `/v1/apps/{bundleId}/metrics`, `/insights`,
/// `/terminations` and `/perfPowerMetrics`, answered from the folded cells in one read
/// transaction each.
struct ExplorerController: Sendable {
    let analysis: AnalysisRunner
    /// Rows per answer of `/metrics` at most (`query.max_rows`); longer answers are paged.
    var maxRows = 10_000

    /// Group-by dimensions the explorer accepts.
    static let dimensions: [GroupDimension] = [.version, .device, .os, .appState]

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        let app = group.group("apps/:bundleId")
        app.get("metrics") { request, context in
            let parameters = try QueryParameters(request, extra: ["category", "limit", "cursor"])
            let scope = try scope(parameters, context, defaultGroupBy: [.version])
            let category = try Self.category(parameters)
            let page = try AnswerPage(parameters, path: "metrics/\(scope.app)", cap: maxRows)
            let rows = try await analyze(scope) { try await $0.explorer(scope, category: category) }
            return try QueryController.json(
                scope, page, rows, map: { $0 },
                identity: { row in
                    [
                        row.metric, row.subject ?? "", row.version ?? "", row.device ?? "", row.os ?? "",
                        row.appState ?? "",
                    ]
                    .joined(separator: "\u{1F}")
                })
        }
        app.get("insights") { request, context in
            let parameters = try QueryParameters(request, extra: ["latest", "reference"])
            let scope = try scope(parameters, context, defaultGroupBy: [])
            let (latest, references) = try Self.comparison(parameters)
            let byDevice = try Self.byDevice(scope)
            let answer = try await analyze(scope) {
                try await $0.insights(scope, latest: latest, referenceCount: references, byDevice: byDevice)
            }
            return try QueryController.json(InsightsBody(scope, answer))
        }
        app.get("terminations") { request, context in
            let parameters = try QueryParameters(request, extra: ["limit", "cursor"])
            let scope = try scope(parameters, context, defaultGroupBy: [.version])
            guard scope.groupBy == [.version] else {
                throw QueryParameters.invalid("group_by", "terminations are always per version")
            }
            let page = try AnswerPage(parameters, path: "terminations/\(scope.app)", cap: maxRows)
            let rows = try await analyze(scope) { try await $0.terminations(scope) }
            return try QueryController.json(
                scope, page, rows, map: { $0 }, identity: { "\($0.version)\u{1F}\($0.reason)" })
        }
        app.get("perfPowerMetrics") { request, context in
            let parameters = try QueryParameters(request, extra: ["latest", "reference"])
            let scope = try scope(parameters, context, defaultGroupBy: [])
            guard scope.groupBy.isEmpty else {
                throw QueryParameters.invalid("group_by", "perfPowerMetrics always splits by version and device")
            }
            let (latest, references) = try Self.comparison(parameters)
            let metrics = try await analyze(scope) { analyzer in
                // Apple's shape has no intervals: only a change past the threshold needs one.
                var configuration = InsightConfiguration()
                configuration.intervalsForAll = false
                let (overall, perDevice, insights) = try await analyzer.perfPower(
                    scope, latest: latest, referenceCount: references, configuration: configuration)
                let rows = overall + perDevice
                let versions = Set(rows.compactMap(\.version)).sorted(by: VersionOrder.precedes)
                var groups: [PerfPowerInsightGroup] = []
                var index: [String: Int] = [:]
                for entry in insights.entries where entry.subject.isEmpty {
                    let key = entry.metric.id + "\u{1F}" + entry.device
                    if let at = index[key] {
                        groups[at].insights.append(entry.insight)
                    } else {
                        index[key] = groups.count
                        groups.append(
                            PerfPowerInsightGroup(
                                metric: entry.metric.id, device: entry.device.isEmpty ? nil : entry.device,
                                insights: [entry.insight]))
                    }
                }
                return PerfPowerMetricsBuilder.build(rows: rows, insights: groups, versions: versions)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            return Response(
                status: .ok, headers: [.contentType: XcodeMetrics.contentType],
                body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(metrics))))
        }
    }

    /// `category`: one of the catalog's categories, or `nil` (every category).
    static func category(_ parameters: QueryParameters) throws(APIError) -> ExplorerCategory? {
        guard let raw = parameters["category"] else { return nil }
        guard let category = ExplorerCategory(rawValue: raw) else {
            throw QueryParameters.invalid(
                "category",
                "\"\(QueryParameters.printable(raw))\" is not one of \(ExplorerCategory.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return category
    }

    /// `latest` (a version; default the newest in the window) and `reference` (1…20 versions
    /// before it; default 3).
    static func comparison(_ parameters: QueryParameters) throws(APIError) -> (String?, Int) {
        let latest = parameters["latest"]
        if let latest, latest.isEmpty { throw QueryParameters.invalid("latest", "must name a version") }
        return (latest, try parameters.integer("reference", in: 1...20) ?? 3)
    }

    /// Insights split by device type with `group_by=device`; nothing else groups them.
    static func byDevice(_ scope: Scope) throws(APIError) -> Bool {
        guard scope.groupBy.allSatisfy({ $0 == .device }) else {
            throw QueryParameters.invalid("group_by", "insights accept only device (version is what they compare)")
        }
        return scope.groupBy == [.device]
    }

    private func analyze<T: Sendable>(
        _ scope: Scope, _ body: @escaping @Sendable (Analyzer) async throws -> T
    ) async throws -> T {
        try await analysis.analyze(knownApp: scope.app, body)
    }

    /// The scope after checking the key may read the app; `group_by` limited to the explorer's.
    private func scope(
        _ parameters: QueryParameters, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        let scope = try QueryController.scope(parameters, context, defaultGroupBy: defaultGroupBy)
        if let other = scope.groupBy.first(where: { !Self.dimensions.contains($0) }) {
            throw QueryParameters.invalid(
                "group_by",
                "\(other.rawValue) is not an explorer dimension; accepted: \(Self.dimensions.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return scope
    }
}
