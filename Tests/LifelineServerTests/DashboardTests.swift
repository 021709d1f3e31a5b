import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import NIOCore
import Testing

@Suite("Built-in dashboard page, on SQLite and on PostgreSQL")
struct DashboardTests {
    static let notes = ReportTests.notes

    static func login(
        _ client: any TestClientProtocol, _ key: String, origin: String? = "http://localhost"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let origin { headers[.origin] = origin }
        return try await client.execute(
            uri: "/login", method: .post, headers: headers, body: ByteBuffer(string: "key=\(key)"))
    }

    static func page(_ client: any TestClientProtocol, _ uri: String, cookie: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
    }

    @Test(
        "login form, cookie sign-in with a read key only, pickers and the report's sections",
        arguments: Backend.allCases)
    func signInAndBrowse(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        let read = try await env.token(.read)
        let ingest = try await env.token(.ingest, app: Self.notes)
        let scoped = try await env.token(.read, app: ReportTests.meter)
        try await ReportTests.fill(env) { client, _ in
            let anonymous = try await client.execute(uri: "/", method: .get)
            #expect(anonymous.status == .ok)
            #expect(String(buffer: anonymous.body).contains("action=\"/login\""))

            #expect(try await Self.login(client, "ll_nope_nope").status == .unauthorized)
            #expect(try await Self.login(client, ingest).status == .unauthorized)
            let signedIn = try await Self.login(client, read)
            #expect(signedIn.status == .found)
            #expect(signedIn.headers[.location] == "/")
            let setCookie = try #require(signedIn.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))

            let window = "from=2026-10-01&to=2026-11-30"
            let all = try await Self.page(client, "/?app=\(Self.notes)&\(window)", cookie: cookie)
            #expect(all.status == .ok)
            #expect(all.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: all.body)
            #expect(html.contains("<option selected>\(Self.notes)</option>"))
            #expect(html.contains("<option>4.1.0</option>") && html.contains("<option>4.2.0</option>"))
            #expect(html.contains("<h2>Exits by version</h2>"))
            #expect(html.contains("<tr class=\"flagged\"><td>4.2.0</td>"))
            #expect(!html.contains("<script"))

            // One version picked: its balanced handler only.
            let one = String(
                buffer: try await Self.page(client, "/?app=\(Self.notes)&\(window)&version=4.1.0", cookie: cookie).body)
            #expect(one.contains("<option selected>4.1.0</option>"))
            #expect(!one.contains("<tr class=\"flagged\">"))

            // The same page with the key as a bearer token.
            let bearer = try await client.execute(
                uri: "/?app=\(Self.notes)&\(window)", method: .get, headers: [.authorization: "Bearer \(read)"])
            #expect(bearer.status == .ok)

            let badWindow = try await Self.page(client, "/?from=2026-13-01", cookie: cookie)
            #expect(badWindow.status == .badRequest)

            // A key scoped to one app offers only that app.
            let scopedCookie = try #require(
                try await Self.login(client, scoped).headers[.setCookie]?.split(separator: ";").first.map(String.init))
            let scopedPage = String(
                buffer: try await Self.page(
                    client, "/?app=\(Self.notes)&from=2020-01-01&to=2026-11-30", cookie: scopedCookie
                ).body)
            #expect(scopedPage.contains("<option selected>\(ReportTests.meter)</option>"))
            #expect(!scopedPage.contains(Self.notes))

            let out = try await client.execute(uri: "/logout", method: .post, headers: [.cookie: cookie])
            #expect(out.status == .seeOther)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            // Logged out: the cookie no longer signs in.
            #expect(try await Self.page(client, "/?\(window)", cookie: cookie).status == .unauthorized)
        }
        await env.remove()
    }

    @Test("the cookie is an opaque session id, never the key; logout and revocation end it")
    func sessionsAreOpaqueAndEnd() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let read = try env.database.createKey(role: .read, app: nil)
        try await ReportTests.fill(env) { client, _ in
            let signedIn = try await Self.login(client, read.token)
            let setCookie = try #require(signedIn.headers[.setCookie])
            #expect(!setCookie.contains(read.token))
            #expect(!setCookie.contains(read.key.id))
            let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
            #expect(cookie.hasPrefix("lifeline_session=lls_"))
            // Only the session's hash is stored.
            let session = String(cookie.dropFirst("lifeline_session=".count))
            let stored = try env.database.query("SELECT id_hash, key_id FROM dashboard_sessions")
            #expect(stored.count == 1)
            #expect(stored.first?.last == .text(read.key.id))
            #expect(stored.first?.first != .blob(Array(session.utf8)))
            #expect(try await Self.page(client, "/", cookie: cookie).status == .ok)

            // Logout deletes the session server-side: replaying the cookie signs nobody in.
            _ = try await client.execute(uri: "/logout", method: .post, headers: [.cookie: cookie])
            #expect(try await Self.page(client, "/", cookie: cookie).status == .unauthorized)
            #expect(try env.database.query("SELECT count(*) FROM dashboard_sessions") == [[.integer(0)]])

            // Revoking the key ends its sessions.
            let again = try #require(
                try await Self.login(client, read.token).headers[.setCookie]?.split(separator: ";").first
                    .map(String.init))
            #expect(try await Self.page(client, "/", cookie: again).status == .ok)
            #expect(try env.database.revokeKey(id: read.key.id))
            #expect(try await Self.page(client, "/", cookie: again).status == .unauthorized)
        }
    }

    @Test("POST /login from another origin, or with no origin at all, is refused (login CSRF)")
    func loginChecksOrigin() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let read = try env.token(.read)
        try await ReportTests.fill(env) { client, _ in
            let foreign = try await Self.login(client, read, origin: "https://evil.example")
            #expect(foreign.status == .forbidden)
            #expect(foreign.headers[.setCookie] == nil)
            #expect(try await Self.login(client, read, origin: nil).status == .forbidden)
            #expect(try await Self.login(client, read, origin: "null").status == .forbidden)
            #expect(try await Self.login(client, read, origin: "http://localhost.evil.example").status == .forbidden)
            var viaReferer: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            viaReferer[.referer] = "http://localhost/?app=x"
            let referred = try await client.execute(
                uri: "/login", method: .post, headers: viaReferer, body: ByteBuffer(string: "key=\(read)"))
            #expect(referred.status == .found)
        }
    }

    @Test("every HTML answer forbids framing, sniffing and referrers")
    func securityHeaders() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let read = try env.token(.read)
        try await ReportTests.fill(env) { client, _ in
            let answers = [
                try await client.execute(uri: "/", method: .get),
                try await client.execute(
                    uri: "/?from=2026-10-01&to=2026-11-30", method: .get, headers: [.authorization: "Bearer \(read)"]),
                try await Self.login(client, "ll_nope_nope"),
                try await Self.login(client, read, origin: "https://evil.example"),
            ]
            for answer in answers {
                let csp = answer.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                #expect(csp.contains("frame-ancestors 'none'"), "\(answer.status)")
                #expect(csp.contains("default-src 'none'"))
                #expect(answer.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(answer.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            }
            // A request that says it came over TLS gets a Secure cookie.
            var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .origin: "http://localhost"]
            headers[HTTPField.Name("X-Forwarded-Proto")!] = "https"
            let tls = try await client.execute(
                uri: "/login", method: .post, headers: headers, body: ByteBuffer(string: "key=\(read)"))
            #expect(tls.headers[.setCookie]?.contains("; Secure") == true)
            #expect(try await Self.login(client, read).headers[.setCookie]?.contains("Secure") == false)
        }
    }

    @Test(
        "the dashboard page renders in headless Chromium without console errors",
        .enabled(if: Chromium.isAvailableOrRequired, "chromium is not installed (CI installs it)"))
    func rendersInChromium() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        let read = try env.token(.read)
        let file = env.directory.url.appendingPathComponent("dashboard.html")
        try await ReportTests.fill(env) { client, _ in
            let page = try await client.execute(
                uri: "/?app=\(Self.notes)&from=2026-10-01&to=2026-11-30", method: .get,
                headers: [.authorization: "Bearer \(read)"])
            #expect(page.status == .ok)
            try Data(buffer: page.body).write(to: file)
        }
        try await Chromium.expectRenders(file)
    }
}
