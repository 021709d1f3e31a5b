import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineReport
import LifelineStore

/// The built-in dashboard: `GET /` shows one app's report sections live, server-rendered (no
/// script, no front-end toolchain), with app, window and version pickers as a plain GET form.
///
/// It needs a read (or admin) key: sent as `Authorization: Bearer`, or entered once in the login
/// form (`POST /login`), which keeps it in an HttpOnly, SameSite=Strict cookie; `POST /logout`
/// forgets it. A key scoped to one app sees only that app.
struct DashboardController: Sendable {
    let database: Database
    let analyzer: Analyzer
    let keys: KeyCache

    static let cookie = "lifeline_key"

    func addRoutes(to router: Router<LifelineRequestContext>) {
        router.get("/") { request, _ in try await page(request) }
        router.post("login") { request, _ in try await login(request) }
        router.post("logout") { _, _ in
            var response = Response.redirect(to: "/", type: .normal)
            response.headers[.setCookie] = "\(Self.cookie)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
            return response
        }
    }

    // MARK: Pages

    private func page(_ request: Request) async throws -> Response {
        guard let token = token(request) else { return html(DashboardHTML.login(error: nil), status: .ok) }
        guard let key = try verified(token) else {
            var response = html(
                DashboardHTML.login(error: "That key is unknown, revoked, or not a read key."), status: .unauthorized)
            response.headers[.setCookie] = "\(Self.cookie)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
            return response
        }
        let query = request.uri.queryParameters
        let today = Day.of(epochSeconds: Int64(Date().timeIntervalSince1970))
        var form = DashboardHTML.Form(
            app: query["app"].map(String.init), from: query["from"].map(String.init) ?? "",
            to: query["to"].map(String.init) ?? "", versions: query.getAll("version").map { String($0) })
        if form.to.isEmpty { form.to = today }
        if form.from.isEmpty, let to = Day.ordinal(form.to) { form.from = Day.string(to - 29) }
        let apps = try analyzer.reader.apps().map(\.bundleID).filter { key.app == nil || $0 == key.app }
        guard !apps.isEmpty else {
            return html(
                DashboardHTML.page(
                    form: form, apps: [], versions: [],
                    content: DashboardHTML.message("No data yet: ingest a payload first.")), status: .ok)
        }
        if form.app == nil || !apps.contains(form.app!) { form.app = key.app ?? apps[0] }
        let first = Day.ordinal(form.from) ?? Int.max
        let last = Day.ordinal(form.to) ?? Int.min
        guard first <= last, last - first < 3_660 else {
            let message = DashboardHTML.message(
                "The window must be two dates YYYY-MM-DD, from ≤ to, at most 3,660 days apart.")
            return html(DashboardHTML.page(form: form, apps: apps, versions: [], content: message), status: .badRequest)
        }
        let days = DayRange(from: form.from, to: form.to)
        let versions = try analyzer.reader.usage(Scope(app: form.app!, days: days, groupBy: [.version]))
            .compactMap(\.key.version).sorted(by: VersionOrder.precedes)
        form.versions = form.versions.filter(versions.contains)
        let report = try ReportBuilder(database: database, analyzer: analyzer).build(
            Report.Request(app: form.app!, days: days, versions: form.versions),
            now: Int64(Date().timeIntervalSince1970))
        let content = ReportHTML.sections(report)
        return html(DashboardHTML.page(form: form, apps: apps, versions: versions, content: content), status: .ok)
    }

    private func login(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 4_096)
        let fields = URLEncodedForm.parse(String(buffer: body))
        guard let token = fields["key"]?.trimmingCharacters(in: .whitespaces), !token.isEmpty,
            try verified(token) != nil
        else {
            return html(
                DashboardHTML.login(error: "That key is unknown, revoked, or not a read key."), status: .unauthorized)
        }
        var response = Response.redirect(to: "/", type: .found)
        response.headers[.setCookie] = "\(Self.cookie)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=604800"
        return response
    }

    // MARK: Keys

    /// The key from `Authorization: Bearer`, else from the cookie.
    private func token(_ request: Request) -> String? {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        for cookie in request.headers[values: .cookie].flatMap({ $0.split(separator: ";") }) {
            let pair = cookie.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == Self.cookie, !pair[1].isEmpty { return String(pair[1]) }
        }
        return nil
    }

    /// The key if it exists, is not revoked, and may read.
    private func verified(_ token: String) throws -> APIKey? {
        guard let key = try keys.key(for: token), key.role == .read || key.role == .admin else { return nil }
        return key
    }

    private func html(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .init("Content-Security-Policy")!:
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// `application/x-www-form-urlencoded` bodies.
enum URLEncodedForm {
    static func parse(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if let name = parts.first { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }
}
