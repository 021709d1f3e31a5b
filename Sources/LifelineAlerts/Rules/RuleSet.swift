/// A validated rule file: rules, receivers and routing, ready to run.
package struct RuleSet: Sendable, Equatable {
    package var rules: [AlertRule]
    package var receivers: [ReceiverConfig]
    /// `nil`: every receiver gets every alert.
    package var route: RouteConfig?
    /// Seconds between evaluations.
    package var evaluationInterval: Int64
    /// Base URL of this Lifeline, for links in notifications (`generatorURL`).
    package var externalURL: String?

    package init(
        rules: [AlertRule] = [], receivers: [ReceiverConfig] = [], route: RouteConfig? = nil,
        evaluationInterval: Int64 = 60, externalURL: String? = nil
    ) {
        self.rules = rules
        self.receivers = receivers
        self.route = route
        self.evaluationInterval = evaluationInterval
        self.externalURL = externalURL
    }

    /// The receivers of an alert with `labels`.
    package func receivers(for labels: [String: String]) -> [ReceiverConfig] {
        guard let route else { return receivers }
        let names = route.receivers(for: labels)
        return names.compactMap { name in receivers.first { $0.name == name } }
    }
}
