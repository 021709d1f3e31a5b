import Foundation
import LifelineReport

/// The dashboard's pages around the report sections.
enum DashboardHTML {
    struct Form {
        var app: String?
        var from: String
        var to: String
        var versions: [String]
        /// The metrics page (`page=metrics`) instead of the overview.
        var metrics = false
    }

    static func login(error: String?) -> String {
        var body =
            "<h1>Lifeline</h1><p class=\"meta\">Sign in with a read key (<code>lifeline keys create --role read</code>).</p>"
        if let error { body += "<p><span class=\"badge bad\">\(HTML.escape(error))</span></p>" }
        body += """
            <form class="pickers" method="post" action="/login">
            <label>Read key<input type="password" name="key" autocomplete="off" size="48" required></label>
            <button type="submit">Sign in</button></form>
            """
        return ReportHTML.page(title: "Lifeline — sign in", body: body)
    }

    static func page(form: Form, apps: [String], versions: [String], content: String) -> String {
        var body = "<h1>\(HTML.escape(form.app ?? "Lifeline"))</h1>"
        // Overview and metrics pages of the same app and window.
        var link = "/?app=\(query(form.app ?? ""))&from=\(query(form.from))&to=\(query(form.to))"
        for version in form.versions { link += "&version=\(query(version))" }
        body += "<nav class=\"meta\">"
        body += form.metrics ? "<a href=\"\(HTML.escape(link))\">Overview</a>" : "<strong>Overview</strong>"
        body += " · "
        body +=
            form.metrics ? "<strong>Metrics</strong>" : "<a href=\"\(HTML.escape(link + "&page=metrics"))\">Metrics</a>"
        body += "</nav>"
        body += "<form class=\"pickers\" method=\"get\" action=\"/\"><label>App<select name=\"app\">"
        for app in apps {
            body += "<option\(app == form.app ? " selected" : "")>\(HTML.escape(app))</option>"
        }
        body += "</select></label>"
        body += "<label>From<input type=\"date\" name=\"from\" value=\"\(HTML.escape(form.from))\"></label>"
        body += "<label>To<input type=\"date\" name=\"to\" value=\"\(HTML.escape(form.to))\"></label>"
        body +=
            "<label>Versions (none = all)<select name=\"version\" multiple size=\"\(min(6, max(2, versions.count)))\">"
        for version in versions {
            body += "<option\(form.versions.contains(version) ? " selected" : "")>\(HTML.escape(version))</option>"
        }
        body += "</select></label>"
        if form.metrics { body += "<input type=\"hidden\" name=\"page\" value=\"metrics\">" }
        body += "<button type=\"submit\">Show</button></form>"
        body += "<form method=\"post\" action=\"/logout\" style=\"text-align:right;margin:4px 0\">"
        body += "<button type=\"submit\">Sign out</button></form>"
        return ReportHTML.page(title: "Lifeline — \(form.app ?? "dashboard")", body: body + content)
    }

    /// `text` percent-encoded for a query value.
    static func query(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    static func message(_ text: String) -> String { "<p class=\"empty\">\(HTML.escape(text))</p>" }
}
