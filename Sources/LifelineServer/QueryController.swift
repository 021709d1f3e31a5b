import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel
import LifelineStore

/// The aggregate endpoints (`/v1/apps…`, read key). Every figure comes from ``Analyzer``.
struct QueryController: Sendable {
    let analyzer: Analyzer

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.get("apps") { _, context in
            let key = try context.requireKey(.read)
            let apps = try analyzer.reader.apps().filter { key.app == nil || key.app == $0.bundleID }
            return try Self.json(AppsBody(apps: apps.map(AppBody.init)))
        }
        let app = group.group("apps/:bundleId")
        app.get("summary") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [])
            return try Self.json(try summary(scope))
        }
        app.get("exits") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try analyzer.exits(scope).map(QueryResponses.ExitRow.init)
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("signposts") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try analyzer.reader.signposts(scope, categories: []).map(QueryResponses.SignpostRowBody.init)
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("expiration-handlers") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try analyzer.handlers(scope).map(QueryResponses.HandlerRow.init)
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("restoration") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try analyzer.restoration(scope).map(QueryResponses.RestorationRow.init)
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("launch") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            var rows: [QueryResponses.PercentileRow] = []
            for (name, source) in Analyzer.launchHistograms {
                rows += try analyzer.percentiles(scope, source: source).map { .init(name: name, figure: $0) }
            }
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("hangs") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [.version])
            let rows = try analyzer.percentiles(scope, source: Analyzer.hangHistogram).map {
                QueryResponses.PercentileRow(name: "app_hang_time", figure: $0)
            }
            return try Self.json(QueryResponses.Envelope(scope, rows: rows))
        }
        app.get("crashes") { request, context in
            let parameters = try QueryParameters(request, extra: ["kind", "limit"])
            let scope = try scope(parameters, context, defaultGroupBy: [])
            var figures = try analyzer.crashes(scope)
            if let kind = parameters["kind"] {
                guard let wanted = DiagnosticKind(rawValue: kind) else {
                    throw QueryParameters.invalid(
                        "kind",
                        "\"\(QueryParameters.printable(kind))\" is not one of \(DiagnosticKind.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                figures = figures.filter { $0.kind == wanted }
            }
            if let limit = try parameters.integer("limit", in: 1...1000) {
                figures = Array(figures.prefix(limit))
            }
            let rows = figures.map { QueryResponses.CrashRow(figure: $0, withStack: false) }
            return try Self.json(QueryResponses.Envelope(scope, rowsKey: "groups", rows: rows))
        }
        app.get("crashes/:groupId") { request, context in
            let scope = try scope(request, context, defaultGroupBy: [])
            guard let id = context.parameters.get("groupId").flatMap(Int64.init), id > 0 else {
                throw QueryParameters.invalid("groupId", "must be an integer crash group id")
            }
            guard let figure = try analyzer.crashes(scope).first(where: { $0.group.id == id }) else {
                throw APIError(.notFound, code: "not_found", "no crash group \(id) for \(scope.app) in this window")
            }
            return try Self.json(QueryResponses.CrashRow(figure: figure, withStack: true))
        }
    }

    /// The scope of a request after checking the key may read the app and the app exists.
    private func scope(
        _ request: Request, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        try scope(try QueryParameters(request), context, defaultGroupBy: defaultGroupBy)
    }

    /// The scope of parsed parameters after checking the key may read the app and the app exists.
    private func scope(
        _ parameters: QueryParameters, _ context: LifelineRequestContext, defaultGroupBy: [GroupDimension]
    ) throws -> Scope {
        let key = try context.requireKey(.read)
        let app = try Self.bundleID(context)
        if let bound = key.app, bound != app {
            throw APIError.forbidden("this read key may only read \(bound)")
        }
        let scope = try parameters.scope(app: app, defaultGroupBy: defaultGroupBy)
        guard try analyzer.reader.hasApp(app) else {
            throw APIError(.notFound, code: "unknown_app", "no data for app \(app)")
        }
        return scope
    }

    private func summary(_ scope: Scope) throws -> SummaryBody {
        let usage = try analyzer.reader.usage(scope)
        let deviceDays = usage.lazy.map(\.payloads).saturatingSum()
        let exits = try analyzer.exits(scope)
        func total(_ state: AppState) -> Int64 { exits.lazy.filter { $0.state == state }.map(\.count).saturatingSum() }
        let restoration = try analyzer.restoration(scope).first
        let handlers = try analyzer.handlers(scope)
        let diagnostics = try analyzer.reader.diagnostics(scope)
        var byKind: [String: Int64] = [:]
        for kind in DiagnosticKind.allCases { byKind[kind.rawValue] = 0 }
        for row in diagnostics { byKind[row.kind.rawValue, default: 0].addSaturating(row.count) }
        let rate = { (count: Int64) -> Double? in deviceDays > 0 ? Double(count) / Double(deviceDays) * 1000 : nil }
        return SummaryBody(
            app: scope.app, window: .init(scope.days), deviceDays: deviceDays,
            foregroundExits: total(.foreground), backgroundExits: total(.background),
            foregroundExitsPer1000DeviceDays: rate(total(.foreground)),
            backgroundExitsPer1000DeviceDays: rate(total(.background)),
            restorationAttempts: restoration?.attempts ?? 0, restorationFailures: restoration?.failures ?? 0,
            restorationErrorRate: restoration?.errorRate,
            flaggedHandlers: handlers.filter(\.flagged).map(\.handler),
            diagnostics: byKind, crashGroups: Set(diagnostics.map(\.crashGroup)).count)
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

    struct AppsBody: Encodable {
        var apps: [AppBody]
    }

    struct AppBody: Encodable {
        var bundleId: String
        var metricPayloads: Int64
        var diagnosticPayloads: Int64
        var firstDay: String?
        var lastDay: String?

        init(_ info: AppInfo) {
            bundleId = info.bundleID
            metricPayloads = info.metricPayloads
            diagnosticPayloads = info.diagnosticPayloads
            firstDay = info.firstDay
            lastDay = info.lastDay
        }

        enum CodingKeys: String, CodingKey {
            case bundleId = "bundle_id"
            case metricPayloads = "metric_payloads"
            case diagnosticPayloads = "diagnostic_payloads"
            case firstDay = "first_day"
            case lastDay = "last_day"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(bundleId, forKey: .bundleId)
            try c.encode(metricPayloads, forKey: .metricPayloads)
            try c.encode(diagnosticPayloads, forKey: .diagnosticPayloads)
            try c.encode(firstDay, forKey: .firstDay)
            try c.encode(lastDay, forKey: .lastDay)
        }
    }

    struct SummaryBody: Encodable {
        var app: String
        var window: QueryResponses.Window
        var deviceDays: Int64
        var foregroundExits: Int64
        var backgroundExits: Int64
        var foregroundExitsPer1000DeviceDays: Double?
        var backgroundExitsPer1000DeviceDays: Double?
        var restorationAttempts: Int64
        var restorationFailures: Int64
        var restorationErrorRate: Double?
        var flaggedHandlers: [String]
        var diagnostics: [String: Int64]
        var crashGroups: Int

        enum CodingKeys: String, CodingKey {
            case app, window, diagnostics
            case deviceDays = "device_days"
            case foregroundExits = "foreground_exits"
            case backgroundExits = "background_exits"
            case foregroundExitsPer1000DeviceDays = "foreground_exits_per_1000_device_days"
            case backgroundExitsPer1000DeviceDays = "background_exits_per_1000_device_days"
            case restorationAttempts = "restoration_attempts"
            case restorationFailures = "restoration_failures"
            case restorationErrorRate = "restoration_error_rate"
            case flaggedHandlers = "flagged_handlers"
            case crashGroups = "crash_groups"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(app, forKey: .app)
            try c.encode(window, forKey: .window)
            try c.encode(deviceDays, forKey: .deviceDays)
            try c.encode(foregroundExits, forKey: .foregroundExits)
            try c.encode(backgroundExits, forKey: .backgroundExits)
            try c.encode(foregroundExitsPer1000DeviceDays, forKey: .foregroundExitsPer1000DeviceDays)
            try c.encode(backgroundExitsPer1000DeviceDays, forKey: .backgroundExitsPer1000DeviceDays)
            try c.encode(restorationAttempts, forKey: .restorationAttempts)
            try c.encode(restorationFailures, forKey: .restorationFailures)
            try c.encode(restorationErrorRate, forKey: .restorationErrorRate)
            try c.encode(flaggedHandlers, forKey: .flaggedHandlers)
            try c.encode(diagnostics, forKey: .diagnostics)
            try c.encode(crashGroups, forKey: .crashGroups)
        }
    }
}
