/// Which receivers get an alert, matched on labels (a subset of Alertmanager's routing tree):
/// child routes are tried in order; the first whose `match` labels all equal the alert's gets it,
/// and matching stops unless that route says `continue: true`; with no child match, the route's
/// own receiver gets it. A child route without `match` matches every alert.
package struct RouteConfig: Sendable, Equatable {
    package var receiver: String?
    package var match: [String: String] = [:]
    package var continueMatching = false
    package var routes: [RouteConfig] = []

    package init(
        receiver: String?, match: [String: String] = [:], continueMatching: Bool = false, routes: [RouteConfig] = []
    ) {
        self.receiver = receiver
        self.match = match
        self.continueMatching = continueMatching
        self.routes = routes
    }

    /// The receivers for an alert with `labels`, in order, without repeats.
    package func receivers(for labels: [String: String]) -> [String] {
        var out: [String] = []
        for name in collect(labels) where !out.contains(name) { out.append(name) }
        return out
    }

    private func collect(_ labels: [String: String]) -> [String] {
        var found: [String] = []
        for child in routes where child.matches(labels) {
            found += child.collect(labels)
            if !child.continueMatching { return found }
        }
        if found.isEmpty, let receiver { found.append(receiver) }
        return found
    }

    private func matches(_ labels: [String: String]) -> Bool {
        match.allSatisfy { labels[$0.key] == $0.value }
    }
}
