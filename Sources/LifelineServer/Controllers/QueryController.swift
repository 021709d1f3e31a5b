import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel

/// The aggregate endpoints (`/v1/apps…`, read key). Every figure comes from ``Analyzer``, in one
/// read transaction per request on the store's threads; every row is encoded by ``FigureJSON``
/// (the report's JSON uses the same rows).
struct QueryController: Sendable {
    let analysis: AnalysisRunner
    /// Rows per answer of the row-list endpoints at most (`query.max_rows`); longer answers are
    /// paged (``AnswerPage``).
    var maxRows = 10_000

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
            let (scope, page) = try paged(request, context, "exits")
            let figures = try await analyze(scope) { try await $0.exits(scope) }
            return try Self.json(
                scope, page, figures, map: FigureJSON.ExitRow.init,
                identity: { "\(AnswerPage.identity($0.key))\u{1F}\($0.state.rawValue)\u{1F}\($0.reason)" })
        }
        app.get("signposts") { request, context in
            let (scope, page) = try paged(request, context, "signposts")
            let figures = try await analyze(scope) { try await $0.signposts(scope) }
            return try Self.json(
                scope, page, figures, map: FigureJSON.SignpostRowBody.init,
                identity: { "\(AnswerPage.identity($0.key))\u{1F}\($0.category)\u{1F}\($0.name)" })
        }
        app.get("expiration-handlers") { request, context in
            let (scope, page) = try paged(request, context, "expiration-handlers")
            let figures = try await analyze(scope) { try await $0.handlers(scope) }
            return try Self.json(
                scope, page, figures, map: FigureJSON.HandlerRow.init,
                identity: { "\(AnswerPage.identity($0.key))\u{1F}\($0.category)\u{1F}\($0.handler)" })
        }
        app.get("restoration") { request, context in
            let (scope, page) = try paged(request, context, "restoration")
            let figures = try await analyze(scope) { try await $0.restoration(scope) }
            return try Self.json(
                scope, page, figures, map: FigureJSON.RestorationRow.init, identity: { AnswerPage.identity($0.key) })
        }
        app.get("launch") { request, context in
            let (scope, page) = try paged(request, context, "launch")
            let figures = try await analyze(scope) { analyzer in
                try await Analyzer.launchHistograms.asyncMap { name, source in
                    try await analyzer.percentiles(scope, source: source).map {
                        NamedPercentiles(name: name, figure: $0)
                    }
                }.flatMap { $0 }
            }
            return try Self.json(
                scope, page, figures, map: { FigureJSON.PercentileRow(name: $0.name, figure: $0.figure) },
                identity: { "\($0.name)\u{1F}\(AnswerPage.identity($0.figure.key))" })
        }
        app.get("hangs") { request, context in
            let (scope, page) = try paged(request, context, "hangs")
            let figures = try await analyze(scope) { try await $0.percentiles(scope, source: Analyzer.hangHistogram) }
            return try Self.json(
                scope, page, figures,
                map: { FigureJSON.PercentileRow(name: Analyzer.hangHistogramName, figure: $0) },
                identity: { AnswerPage.identity($0.key) })
        }
        app.get("crashes") { request, context in
            let parameters = try QueryParameters(request, extra: ["kind", "limit", "cursor"])
            let scope = try scope(parameters, context, defaultGroupBy: [])
            let page = try AnswerPage(parameters, path: "crashes/\(scope.app)", cap: maxRows)
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
            let figures = try await analyze(scope) { [wanted] analyzer in
                var figures = try await analyzer.crashes(scope)
                if let wanted { figures = figures.filter { $0.kind == wanted } }
                return figures
            }
            return try Self.json(
                scope, page, figures, rowsKey: "groups", map: { FigureJSON.CrashRow(figure: $0, withStack: false) },
                identity: { String($0.group.id) })
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

    /// These answers read the rollups alone: their reads do not wait for the explorer's held rows
    /// (``ReadFreshness/readsExplorer``).
    private func analyze<T: Sendable>(
        _ scope: Scope, _ body: @escaping @Sendable (Analyzer) async throws -> T
    ) async throws -> T {
        try await ReadFreshness.$readsExplorer.withValue(false) {
            try await analysis.analyze(knownApp: scope.app, body)
        }
    }

    /// A launch histogram's percentiles of one group.
    private struct NamedPercentiles: Sendable {
        var name: String
        var figure: PercentileFigure
    }

    /// The scope and page of a row-list request (`limit`, `cursor`) after checking the key may
    /// read the app.
    private func paged(
        _ request: Request, _ context: LifelineRequestContext, _ endpoint: String
    ) throws -> (Scope, AnswerPage) {
        let parameters = try QueryParameters(request, extra: ["limit", "cursor"])
        let scope = try scope(parameters, context, defaultGroupBy: [.version])
        return (scope, try AnswerPage(parameters, path: "\(endpoint)/\(scope.app)", cap: maxRows))
    }

    /// The page of `figures` as the endpoint's JSON rows in the envelope, with `truncated` and
    /// `next_cursor`. Only the page is turned into JSON rows.
    static func json<Figure, Row: Encodable & Sendable>(
        _ scope: Scope, _ page: AnswerPage, _ figures: [Figure], rowsKey: String = "rows", map: (Figure) -> Row,
        identity: (Figure) -> String
    ) throws -> Response {
        let (rows, next) = try page.cut(figures, identity: identity)
        return try json(
            FigureJSON.Envelope(scope, rowsKey: rowsKey, rows: rows.map(map), page: (next != nil, next)))
    }

    /// The scope of a request after checking the key may read the app.
    private func scope(
        _ request: Request, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        try scope(try QueryParameters(request), context, defaultGroupBy: defaultGroupBy)
    }

    private func scope(
        _ parameters: QueryParameters, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        try Self.scope(parameters, context, defaultGroupBy: defaultGroupBy)
    }

    /// The scope of parsed parameters after checking the key may read the app.
    static func scope(
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

extension AnalysisRunner {
    /// Runs `body` in one read transaction after checking, in the same transaction, that the
    /// store knows `app` (404 `unknown_app` otherwise).
    func analyze<T: Sendable>(knownApp app: String, _ body: @escaping @Sendable (Analyzer) async throws -> T)
        async throws -> T
    {
        try await analyze { analyzer in
            guard try await analyzer.hasApp(app) else {
                throw APIError(.notFound, code: "unknown_app", "no data for app \(app)")
            }
            return try await body(analyzer)
        }
    }
}
