import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel

/// The aggregate endpoints (`/v1/apps…`, read key). Every figure comes from ``Analyzer``, in one
/// read transaction per request on the store's threads; every row is encoded by ``FigureJSON``
/// (the report's JSON uses the same rows).
struct QueryController: Sendable {
    let analysis: AnalysisRunner

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.get("apps") { _, context in
            let key = try context.requireKey(.read)
            let apps = try await analysis.analyze { try await $0.apps() }.filter {
                key.app == nil || key.app == $0.bundleID
            }
            return try Self.json(FigureJSON.AppsBody(apps))
        }
        let app = group.group("apps/:bundleId")
        app.get("summary") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [])
            return try Self.json(
                try await analyze(scope) { FigureJSON.SummaryBody(scope, try await $0.summary(scope)) })
        }
        app.get("exits") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) { try await $0.exits(scope).map(FigureJSON.ExitRow.init) }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("signposts") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) { try await $0.signposts(scope).map(FigureJSON.SignpostRowBody.init) }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("expiration-handlers") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) { try await $0.handlers(scope).map(FigureJSON.HandlerRow.init) }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("restoration") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) { try await $0.restoration(scope).map(FigureJSON.RestorationRow.init) }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("launch") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) { analyzer in
                try await Analyzer.launchHistograms.asyncMap { name, source in
                    try await analyzer.percentiles(scope, source: source).map {
                        FigureJSON.PercentileRow(name: name, figure: $0)
                    }
                }.flatMap { $0 }
            }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("hangs") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try await analyze(scope) {
                try await $0.percentiles(scope, source: Analyzer.hangHistogram).map {
                    FigureJSON.PercentileRow(name: Analyzer.hangHistogramName, figure: $0)
                }
            }
            return try Self.json(FigureJSON.Envelope(scope, rows: rows))
        }
        app.get("crashes") { request, context in
            let parameters = try QueryParameters(request, extra: ["kind", "limit"])
            let scope = try scope(parameters, context, defaultGroupBy: [])
            var wanted: DiagnosticKind?
            if let kind = parameters["kind"] {
                guard let known = DiagnosticKind(rawValue: kind) else {
                    throw QueryParameters.invalid(
                        "kind",
                        "\"\(QueryParameters.printable(kind))\" is not one of \(DiagnosticKind.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                wanted = known
            }
            let limit = try parameters.integer("limit", in: 1...1000)
            let rows = try await analyze(scope) { [wanted] analyzer in
                var figures = try await analyzer.crashes(scope)
                if let wanted { figures = figures.filter { $0.kind == wanted } }
                if let limit { figures = Array(figures.prefix(limit)) }
                return figures.map { FigureJSON.CrashRow(figure: $0, withStack: false) }
            }
            return try Self.json(FigureJSON.Envelope(scope, rowsKey: "groups", rows: rows))
        }
        app.get("crashes/:groupId") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [])
            guard let id = context.parameters.get("groupId").flatMap(Int64.init), id > 0 else {
                throw QueryParameters.invalid("groupId", "must be an integer crash group id")
            }
            let figure = try await analyze(scope) { try await $0.crashes(scope).first { $0.group.id == id } }
            guard let figure else {
                throw APIError(.notFound, code: "not_found", "no crash group \(id) for \(scope.app) in this window")
            }
            return try Self.json(FigureJSON.CrashRow(figure: figure, withStack: true))
        }
    }

    /// Runs `body` in one read transaction after checking, in the same transaction, that the
    /// store knows the scope's app (404 `unknown_app` otherwise).
    private func analyze<T: Sendable>(
        _ scope: Scope, _ body: @escaping @Sendable (Analyzer) async throws -> T
    ) async throws -> T {
        let app = scope.app
        return try await analysis.analyze { analyzer in
            guard try await analyzer.hasApp(app) else {
                throw APIError(.notFound, code: "unknown_app", "no data for app \(app)")
            }
            return try await body(analyzer)
        }
    }

    /// The scope of a request after checking the key may read the app.
    private func scope(
        _ request: Request, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        try scope(try QueryParameters(request), context, defaultGroupBy: defaultGroupBy)
    }

    /// The scope of parsed parameters after checking the key may read the app.
    private func scope(
        _ parameters: QueryParameters, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        let key = try context.requireKey(.read)
        let app = try Self.bundleID(context)
        if let bound = key.app, bound != app {
            throw APIError.forbidden("this read key may only read \(bound)")
        }
        return try parameters.scope(app: app, defaultGroupBy: defaultGroupBy)
    }

    /// The `{bundleId}` path segment, percent-decoded, 1 to 255 bytes.
    static func bundleID(_ context: LifelineRequestContext) throws(APIError) -> String {
        guard let raw = context.parameters.get("bundleId"), let app = raw.removingPercentEncoding,
            (1...255).contains(app.utf8.count)
        else {
            throw QueryParameters.invalid("bundleId", "must be a percent-encoded bundle id of 1 to 255 bytes")
        }
        return app
    }

    static func json(_ body: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = try encoder.encode(body)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
