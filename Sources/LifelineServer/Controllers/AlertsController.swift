import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAlertState
import LifelineModel

/// The alerting endpoints: `GET /v1/alerts` and `GET /v1/rules` (read key), and
/// `POST /-/reload` (admin key), which re-reads the rule file and refuses it, keeping the running
/// rules, when any part is wrong.
struct AlertsController: Sendable {
    let evaluator: AlertEvaluator

    /// `alerts` and `rules`, on the authenticated `/v1` group.
    func addRoutes(to v1: RouterGroup<LifelineRequestContext>) {
        v1.get("alerts") { _, context in
            let key = try context.requireKey(.read)
            let snapshot = await evaluator.snapshot()
            let visible = { (labels: [String: String]) in key.app == nil || labels["app"] == key.app }
            let history = await evaluator.history(lastSeconds: 86_400, limit: 200).filter { visible($0.labels) }
            return try Self.json(
                AlertsBody(
                    alerts: snapshot.alerts.filter { visible($0.labels) }.map(AlertBody.init),
                    recentChanges: history.map(ChangeBody.init)))
        }
        v1.get("rules") { _, context in
            let key = try context.requireKey(.read)
            var snapshot = await evaluator.snapshot()
            // An app-scoped read key counts only its app's pending and firing alerts, sees only
            // the rules that may concern its app, and none of the figures or receivers that span apps.
            if let app = key.app { snapshot.alerts = snapshot.alerts.filter { $0.labels["app"] == app } }
            return try Self.json(RulesBody(snapshot, onlyApp: key.app))
        }
    }

    /// `reload`, on a group (`/-`) behind the auth middleware.
    func addAdminRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.post("reload") { _, context in
            _ = try context.requireKey(.admin)
            let result: Result<RuleSet, RuleFileError>
            do throws(RuleFileError) {
                result = .success(try await evaluator.reload())
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let set):
                context.logger.info("alert rules reloaded", metadata: ["rules": "\(set.rules.count)"])
                return try Self.json(
                    ReloadBody(status: "reloaded", rules: set.rules.count, receivers: set.receivers.count))
            case .failure(let error):
                context.logger.warning("alert rule reload refused", metadata: ["errors": "\(error)"])
                return try Self.refused(error)
            }
        }
    }

    private static func refused(_ error: RuleFileError) throws -> Response {
        let count = error.problems.count
        let body = RefusedBody(
            error: .init(
                code: "invalid_rules",
                message: "the rule file has \(count) problem\(count == 1 ? "" : "s"); the previous rules keep running: "
                    + error.problems.map(\.description).joined(separator: "; "),
                problems: error.problems.map(\.description)))
        var response = try json(body)
        response.status = .unprocessableContent
        return response
    }

    static func json(_ body: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        let data = try encoder.encode(body)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Bodies

    struct AlertsBody: Encodable {
        var alerts: [AlertBody]
        var recentChanges: [ChangeBody]

        enum CodingKeys: String, CodingKey {
            case alerts
            case recentChanges = "recent_changes"
        }
    }

    struct AlertBody: Encodable {
        var rule: String
        var fingerprint: String
        var state: String
        var labels: [String: String]
        var annotations: [String: String]
        var activeSince: String
        var firedAt: String?
        var resolvedAt: String?
        var value: Double?
        var samples: Int64
        var lastEvaluation: String

        init(_ record: AlertStateRecord) {
            rule = record.rule
            fingerprint = record.fingerprint
            state = record.status.rawValue
            labels = record.labels
            annotations = record.annotations
            activeSince = UTCTimestamp.iso8601(record.activeSince)
            firedAt = record.firedAt.map(UTCTimestamp.iso8601)
            resolvedAt = record.resolvedAt.map(UTCTimestamp.iso8601)
            value = record.lastValue.flatMap { $0.isFinite ? $0 : nil }
            samples = record.lastSamples
            lastEvaluation = UTCTimestamp.iso8601(record.lastEval)
        }

        enum CodingKeys: String, CodingKey {
            case rule, fingerprint, state, labels, annotations, value, samples
            case activeSince = "active_since"
            case firedAt = "fired_at"
            case resolvedAt = "resolved_at"
            case lastEvaluation = "last_evaluation"
        }
    }

    struct ChangeBody: Encodable {
        var rule: String
        var fingerprint: String
        var labels: [String: String]
        var from: String
        var to: String
        var at: String
        var value: Double?

        init(_ transition: AlertTransition) {
            rule = transition.rule
            fingerprint = transition.fingerprint
            labels = transition.labels
            from = transition.from.rawValue
            to = transition.to.rawValue
            at = UTCTimestamp.iso8601(transition.at)
            value = transition.value.flatMap { $0.isFinite ? $0 : nil }
        }
    }

    struct RulesBody: Encodable {
        var file: String?
        var loadedAt: String
        var evaluationIntervalSeconds: Int64
        var rules: [RuleBody]
        var receivers: [ReceiverBody]

        /// - Parameter onlyApp: for an app-scoped key: only rules for all apps or that app, without
        ///   the evaluation's value summary and error (they cover every app), and no receivers.
        init(_ snapshot: AlertsSnapshot, onlyApp: String? = nil) {
            file = snapshot.rulesPath.map { ($0 as NSString).lastPathComponent }
            loadedAt = UTCTimestamp.iso8601(snapshot.loadedAt)
            evaluationIntervalSeconds = snapshot.rules.evaluationInterval
            rules = snapshot.rules.rules.filter { onlyApp == nil || $0.app == nil || $0.app == onlyApp }.map { rule in
                var body = RuleBody(
                    rule, evaluation: snapshot.evaluations[rule.name],
                    alerts: snapshot.alerts.filter { $0.rule == rule.name })
                if onlyApp != nil {
                    body.valueSummary = nil
                    body.error = body.error == nil ? nil : "the rule could not be evaluated"
                }
                return body
            }
            receivers =
                onlyApp != nil
                ? []
                : snapshot.rules.receivers.map {
                    ReceiverBody(
                        name: $0.name, kind: $0.kind.rawValue, statistics: snapshot.receivers[$0.name] ?? .init())
                }
        }

        enum CodingKeys: String, CodingKey {
            case file, rules, receivers
            case loadedAt = "loaded_at"
            case evaluationIntervalSeconds = "evaluation_interval_seconds"
        }
    }

    struct RuleBody: Encodable {
        var name: String
        var group: String
        var query: String
        var op: String
        var threshold: Double
        var window: String
        var groupBy: [String]
        var forDuration: String
        var keepFiringFor: String
        var minSamples: Int64
        var app: String?
        var labels: [String: String]
        var annotations: [String: String]
        var lastEvaluation: String?
        var evaluationMilliseconds: Double?
        var valueSummary: String?
        var error: String?
        var pending: Int
        var firing: Int

        init(_ rule: AlertRule, evaluation: RuleEvaluationRecord?, alerts: [AlertStateRecord]) {
            name = rule.name
            group = rule.group
            query = rule.query
            op = rule.op.rawValue
            threshold = rule.threshold
            window = "\(rule.windowDays)d"
            groupBy = rule.groupBy.map(\.rawValue)
            forDuration = RuleDuration.format(rule.forSeconds)
            keepFiringFor = RuleDuration.format(rule.keepFiringForSeconds)
            minSamples = rule.minSamples
            app = rule.app
            labels = rule.labels
            annotations = rule.annotations.mapValues(\.source)
            lastEvaluation = evaluation.map { UTCTimestamp.iso8601($0.lastEval) }
            evaluationMilliseconds = evaluation?.durationMilliseconds
            valueSummary = evaluation?.valueSummary
            error = evaluation?.error
            pending = alerts.filter { $0.status == .pending }.count
            firing = alerts.filter { $0.status == .firing }.count
        }

        enum CodingKeys: String, CodingKey {
            case name, group, query, op, threshold, window, app, labels, annotations, error, pending, firing
            case groupBy = "group_by"
            case forDuration = "for"
            case keepFiringFor = "keep_firing_for"
            case minSamples = "min_samples"
            case lastEvaluation = "last_evaluation"
            case evaluationMilliseconds = "evaluation_ms"
            case valueSummary = "value_summary"
        }
    }

    struct ReceiverBody: Encodable {
        var name: String
        var kind: String
        var statistics: ReceiverStatistics
    }

    struct ReloadBody: Encodable {
        var status: String
        var rules: Int
        var receivers: Int
    }

    struct RefusedBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var problems: [String]
        }
        var error: Detail
    }
}
