import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAlertState
import LifelineAnalysis
import LifelineModel
import LifelineReport
import LifelineStorage

/// The built-in dashboard: `GET /` shows one app's report sections live, server-rendered (no
/// script, no front-end toolchain), with app, window and version pickers as a plain GET form.
///
/// It needs a read (or admin) key: sent as `Authorization: Bearer`, or entered once in the login
/// form (`POST /login`). Signing in opens a server-side session: the HttpOnly, SameSite=Strict
/// cookie holds an opaque random session id (only its SHA-256 is stored, it expires after
/// ``sessionSeconds``, ends on `POST /logout` and when its key is revoked), never the key.
/// `POST /login` is refused unless its `Origin` (or `Referer`) is this site (login CSRF). Every
/// HTML answer carries a CSP with `frame-ancestors 'none'`, `X-Content-Type-Options: nosniff` and
/// `Referrer-Policy: no-referrer`. A key scoped to one app sees only that app.
struct DashboardController: Sendable {
    let sessions: any SessionStore
    let alerts: any AlertStateStore
    let analysis: AnalysisRunner
    let keys: KeyCache
    var sessionSeconds: Int64 = 12 * 3_600
    var secureCookies = false

    static let cookie = "lifeline_session"

    func addRoutes(to router: Router<LifelineRequestContext>) {
        router.get("/") { request, _ in try await page(request) }
        router.post("login") { request, _ in try await login(request) }
        router.post("logout") { request, _ in
            if let session = sessionCookie(request) { try await sessions.endSession(session) }
            var response = Response.redirect(to: "/", type: .normal)
            response.headers[.setCookie] = clearCookie(request)
            Self.secure(&response.headers)
            return response
        }
    }

    // MARK: Pages

    private func page(_ request: Request) async throws -> Response {
        let key: APIKey?
        if let token = bearer(request) {
            key = try await verified(token)
        } else if let session = sessionCookie(request) {
            key = try await sessions.sessionKey(forSession: session).flatMap {
                $0.role == .read || $0.role == .admin ? $0 : nil
            }
        } else {
            return html(DashboardHTML.login(error: nil), status: .ok)
        }
        guard let key else {
            var response = html(
                DashboardHTML.login(error: "That key or session is unknown, expired, revoked, or not a read key."),
                status: .unauthorized)
            response.headers[.setCookie] = clearCookie(request)
            return response
        }
        let query = request.uri.queryParameters
        let today = UTCDay.today
        var form = DashboardHTML.Form(
            app: query["app"].map(String.init), from: query["from"].map(String.init) ?? "",
            to: query["to"].map(String.init) ?? "", versions: query.getAll("version").map { String($0) },
            metrics: query["page"] == "metrics")
        if form.to.isEmpty { form.to = today.string }
        if form.from.isEmpty, let to = UTCDay(form.to) { form.from = DayRange(last: to, count: 30).from.string }
        let apps = try await analysis.analyze { try await $0.apps() }.map(\.bundleID).filter {
            key.app == nil || $0 == key.app
        }
        guard !apps.isEmpty else {
            return html(
                DashboardHTML.page(
                    form: form, apps: [], versions: [],
                    content: DashboardHTML.message("No data yet: ingest a payload first.")), status: .ok)
        }
        let app: String
        if let wanted = form.app, apps.contains(wanted) {
            app = wanted
        } else {
            app = key.app ?? apps[0]
        }
        form.app = app
        guard let first = UTCDay(form.from), let last = UTCDay(form.to), first <= last,
            last.ordinal - first.ordinal < 3_660
        else {
            let message = DashboardHTML.message(
                "The window must be two dates YYYY-MM-DD, from ≤ to, at most 3,660 days apart.")
            return html(DashboardHTML.page(form: form, apps: apps, versions: [], content: message), status: .badRequest)
        }
        let days = DayRange(from: first, to: last)
        let versions = try await analysis.analyze { try await $0.versions(Scope(app: app, days: days)) }
        form.versions = form.versions.filter(versions.contains)
        let report = try await ReportBuilder(analysis: analysis, alerts: alerts).build(
            Report.Request(app: app, days: days, versions: form.versions), now: WallClock.nowSeconds())
        // The metrics page: Insights and every explorer category with a chart per metric.
        let content = form.metrics ? ReportExplorer.html(report) : ReportHTML.sections(report)
        return html(DashboardHTML.page(form: form, apps: apps, versions: versions, content: content), status: .ok)
    }

    private func login(_ request: Request) async throws -> Response {
        guard Self.isSameOrigin(request) else {
            return html(
                DashboardHTML.login(error: "Sign-in refused: the form was not sent from this site."),
                status: .forbidden)
        }
        let body = try await request.body.collect(upTo: 4_096)
        let fields = URLEncodedForm.parse(String(buffer: body))
        guard let token = fields["key"]?.trimmingCharacters(in: .whitespaces), !token.isEmpty,
            let key = try await verified(token)
        else {
            return html(
                DashboardHTML.login(error: "That key is unknown, expired, revoked, or not a read key."),
                status: .unauthorized)
        }
        let sessionSeconds = self.sessionSeconds
        let session = try await sessions.startSession(keyID: key.id, ttl: sessionSeconds)
        var response = Response.redirect(to: "/", type: .found)
        response.headers[.setCookie] =
            "\(Self.cookie)=\(session); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(sessionSeconds)"
            + (isSecure(request) ? "; Secure" : "")
        Self.secure(&response.headers)
        return response
    }

    // MARK: Keys and sessions

    /// Whether `POST /login` came from a page of this site: its `Origin` (or, without one, its
    /// `Referer`) names the request's own `Host`. A request with neither is refused.
    static func isSameOrigin(_ request: Request) -> Bool {
        guard let host = request.head.authority else { return false }
        let source = request.headers[.origin] ?? request.headers[.referer]
        guard let source, source != "null" else { return false }
        for scheme in ["http://", "https://"] where source.hasPrefix(scheme) {
            let rest = source.dropFirst(scheme.count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return authority.lowercased() == host.lowercased()
        }
        return false
    }

    /// Whether the request came over TLS (as told by a proxy) or the config says cookies are `Secure`.
    private func isSecure(_ request: Request) -> Bool {
        if secureCookies { return true }
        guard let name = Self.forwardedProto else { return false }
        return request.headers[name]?.lowercased() == "https"
    }

    private func clearCookie(_ request: Request) -> String {
        "\(Self.cookie)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (isSecure(request) ? "; Secure" : "")
    }

    /// The key from `Authorization: Bearer`.
    private func bearer(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
    }

    /// The session id from the cookie.
    private func sessionCookie(_ request: Request) -> String? {
        for cookie in request.headers[values: .cookie].flatMap({ $0.split(separator: ";") }) {
            let pair = cookie.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == Self.cookie, !pair[1].isEmpty { return String(pair[1]) }
        }
        return nil
    }

    /// The key if it exists, is not revoked, and may read.
    private func verified(_ token: String) async throws -> APIKey? {
        guard let key = try await keys.key(for: token), key.role == .read || key.role == .admin else { return nil }
        return key
    }

    private func html(_ text: String, status: HTTPResponse.Status) -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        Self.secure(&headers)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The security headers of every dashboard answer.
    static func secure(_ headers: inout HTTPFields) {
        for (name, value) in securityHeaders { headers[name] = value }
    }

    static let securityHeaders: [(HTTPFields.Element.Name, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ].compactMap { (pair: (String, String)) in HTTPFields.Element.Name(pair.0).map { ($0, pair.1) } }

    static let forwardedProto = HTTPFields.Element.Name("X-Forwarded-Proto")
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
