/// Stage one of a rule file: the YAML read into plain values, each with the line it came from,
/// before any meaning is checked (``RuleFileValidator`` does that, then builds a ``RuleSet``).
package struct RuleFileDocument: Sendable, Equatable {
    /// A value with the 1-based line it was written on.
    package struct Located<Value: Sendable & Equatable>: Sendable, Equatable {
        package var value: Value
        package var line: Int

        package init(_ value: Value, line: Int) {
            self.value = value
            self.line = line
        }
    }

    /// `groups[]`.
    package struct Group: Sendable, Equatable {
        package var line: Int
        package var name: Located<String>?
        package var app: Located<String>?
        package var rules: [Rule] = []
    }

    /// `groups[].rules[]`, every field as written.
    package struct Rule: Sendable, Equatable {
        package var line: Int
        package var name: Located<String>?
        package var query: Located<String>?
        package var op: Located<String>?
        package var threshold: Located<Double>?
        package var window: Located<String>?
        package var groupBy: Located<[String]>?
        package var forDuration: Located<String>?
        package var keepFiringFor: Located<String>?
        package var minSamples: Located<Int64>?
        package var app: Located<String>?
        package var labels: [Located<KeyValue>] = []
        package var annotations: [Located<KeyValue>] = []
        /// Fields present but of the wrong shape (already reported), so they are not also "missing".
        package var invalid: Set<String> = []
    }

    /// One entry of a string map.
    package struct KeyValue: Sendable, Equatable {
        package var key: String
        package var value: String
    }

    /// `receivers[]`.
    package struct Receiver: Sendable, Equatable {
        package var line: Int
        package var name: Located<String>?
        /// `webhook` or `alertmanager`, with the line of that key.
        package var kind: Located<String>?
        package var url: Located<String>?
        package var headers: [Located<KeyValue>] = []
        package var sendResolved: Located<Bool>?
        package var maxAttempts: Located<Int64>?
        package var initialBackoff: Located<String>?
        package var timeout: Located<String>?
        package var queueCapacity: Located<Int64>?
        /// Fields present but of the wrong shape (already reported).
        package var invalid: Set<String> = []
    }

    /// `route` and `route.routes[]`.
    package struct Route: Sendable, Equatable {
        package var line: Int
        package var receiver: Located<String>?
        package var match: [Located<KeyValue>] = []
        package var continueMatching: Located<Bool>?
        package var routes: [Route] = []
    }

    package var evaluationInterval: Located<String>?
    package var externalURL: Located<String>?
    package var groups: [Group] = []
    package var receivers: [Receiver] = []
    package var route: Route?
}
