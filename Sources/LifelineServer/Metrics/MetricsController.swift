import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAnalysis
import LifelineModel
import LifelineStorage
import Prometheus

/// `GET /metrics`: Prometheus text format. Needs a read (or admin) key, sent by Prometheus as
/// `authorization: {credentials: …}`. A key scoped to one app sees only series about that app
/// (its product figures and its firing alerts): the service-wide counters, rule evaluation
/// counters and receivers, which span every app, are for all-apps keys.
struct MetricsController: Sendable {
    let service: ServiceMetrics
    /// The store's writer gauges.
    let health: any StoreHealth
    let evaluator: AlertEvaluator?
    /// Whether this process runs the singletons (always on SQLite; the lock holder on PostgreSQL).
    let leader: @Sendable () -> Bool
    let product: ProductMetrics
    var admission: IngestAdmission?

    func addRoutes(to group: RouterGroup<LifelineRequestContext>) {
        group.get("metrics") { _, context in
            guard let key = context.apiKey else {
                throw APIError.unauthorized("missing API key: send \"Authorization: Bearer <key>\"")
            }
            guard key.role == .read || key.role == .admin else {
                throw APIError.forbidden(
                    "/metrics needs a read or admin key; the key sent is a \(key.role.rawValue) key")
            }
            return try await scrape(onlyApp: key.app)
        }
    }

    func scrape(onlyApp: String?) async throws -> Response {
        let now = PrometheusCollectorRegistry()  // values read now: no stale series survive a scrape
        let snapshot = await evaluator?.snapshot()
        let product = self.product
        try await product.emit(into: now, today: .today, onlyApp: onlyApp)
        let text = now.emitToString()
        var body = onlyApp == nil ? service.registry.emitToString() : ""
        body += gauges(snapshot: snapshot, onlyApp: onlyApp)
        body += text
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Writer and alerting state read now.
    private func gauges(snapshot: AlertsSnapshot?, onlyApp: String?) -> String {
        let registry = PrometheusCollectorRegistry()
        func counter(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Counter {
            registry.makeCounter(
                descriptor: .init(namespace: "lifeline", metricName: name, unitName: "total", helpText: help),
                labels: labels)
        }
        func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(
                descriptor: .init(namespace: "lifeline", metricName: name, unitName: "", helpText: help), labels: labels
            )
        }
        if let admission {
            for (app, refusals) in admission.refusalCounts where onlyApp == nil || app == onlyApp {
                for (refusal, count) in refusals {
                    counter(
                        "ingest_refusals", "Ingest requests refused by a resource limit, by app and limit",
                        [("app", app), ("limit", refusal.rawValue)]
                    ).increment(by: Int64(count))
                }
            }
        }
        if let onlyApp {
            if let snapshot { firingGauges(snapshot, onlyApp: onlyApp, gauge: gauge) }
            return registry.emitToString()
        }
        gauge("leader", "1 on the node that runs the singletons (alerting, retention), 0 on the others").set(
            Double(leader() ? 1 : 0))
        let statistics = health.writerStatistics
        do {
            gauge("writer_queue_depth", "Ingest requests waiting for the writer").set(Double(statistics.queued))
            gauge("writer_queued_documents", "Documents waiting for the writer").set(
                Double(statistics.queuedDocuments))
            gauge(
                "aggregation_lag_documents",
                "Documents acknowledged and not yet folded into the figures (answers fold them before they read)"
            ).set(Double(statistics.aggregationLagDocuments))
            gauge("aggregation_lag_seconds", "Age of the oldest acknowledged document not yet folded, seconds").set(
                statistics.aggregationLagSeconds)
            gauge(
                "aggregation_explorer_held_documents",
                "Folded documents whose explorer rows the SQLite writer holds in memory (written within database.explorer_write_seconds, version rows within database.explorer_version_seconds, at once for a reader)"
            ).set(Double(statistics.aggregationExplorerHeldDocuments))
            gauge("aggregation_folded_documents", "Documents folded by this process's aggregator since it started")
                .set(Double(statistics.foldedDocuments))
            gauge(
                "aggregation_unreadable_documents",
                "Documents this process's aggregator could not read (kept raw, counted nowhere)"
            ).set(Double(statistics.foldSkipped))
        }
        if let admission {
            registry.makeGauge(
                descriptor: .init(
                    namespace: "lifeline", subsystem: "ingest", metricName: "inflight", unitName: "bytes",
                    helpText: "Body bytes reserved by ingest requests being received, inflated or decoded"),
                labels: []
            ).set(Double(admission.inflightBytes))
            if let free = admission.diskStatus().free {
                registry.makeGauge(
                    descriptor: .init(
                        namespace: "lifeline", subsystem: "disk", metricName: "free", unitName: "bytes",
                        helpText: "Free bytes on the database's file system"),
                    labels: []
                ).set(Double(free))
            }
        }
        do {
            counter("writer_transactions", "Writer transactions committed").increment(
                by: Int64(statistics.transactions))
            counter("aggregation_folds", "Fold transactions committed by this process's aggregator").increment(
                by: Int64(statistics.folds))
            counter("writer_failed_batches", "Writer batches rolled back as a whole").increment(
                by: Int64(statistics.failedBatches))
            counter(
                "raw_compaction_copies",
                "Raw copies the SQLite writer re-deflated against a preset dictionary behind the fold"
            ).increment(by: Int64(statistics.compactedCopies))
            counter("raw_compaction_saved_bytes", "Bytes those re-deflated raw copies saved").increment(
                by: Int64(statistics.compactionSavedBytes))
        }
        for reason in SymbolFileFailure.allCases {
            counter(
                "symbol_files_unusable", "Symbol files that crashed llvm-symbolizer or timed out, marked unusable",
                [("reason", reason.rawValue)]
            ).increment(by: Int64(Symbolicator.unusableFiles(reason)))
        }
        guard let snapshot else { return registry.emitToString() }
        for rule in snapshot.rules.rules {
            let count = snapshot.evaluationCounts[rule.name] ?? EvaluationCount()
            counter("rule_evaluations", "Alert rule evaluations since start", [("rule", rule.name)])
                .increment(by: Int64(count.total))
            counter("rule_evaluation_failures", "Alert rule evaluations that failed since start", [("rule", rule.name)])
                .increment(by: Int64(count.failed))
        }
        for (receiver, stats) in snapshot.receivers {
            let labels = [("receiver", receiver)]
            counter("notifications_sent", "Notifications delivered (2xx)", labels).increment(by: Int64(stats.sent))
            counter("notifications_failed", "Notifications given up after their last attempt", labels)
                .increment(by: Int64(stats.failed))
            counter("notifications_dropped", "Notifications dropped unsent (queue full)", labels)
                .increment(by: Int64(stats.dropped))
            counter("notification_retries", "Notification attempts that failed and were retried", labels)
                .increment(by: Int64(stats.retries))
            gauge("notification_queue_depth", "Notifications waiting for delivery", labels).set(Double(stats.queued))
        }
        firingGauges(snapshot, onlyApp: nil, gauge: gauge)
        return registry.emitToString()
    }

    /// `lifeline_alerts_firing{app, rule}` (only `onlyApp`'s when set; rules for other apps omitted).
    private func firingGauges(
        _ snapshot: AlertsSnapshot, onlyApp: String?, gauge: (String, String, [(String, String)]) -> Gauge
    ) {
        var firing: [[String]: Int] = [:]
        for alert in snapshot.alerts where alert.status == .firing {
            let app = alert.labels["app"] ?? ""
            guard onlyApp == nil || app == onlyApp else { continue }
            firing[[app, alert.rule], default: 0] += 1
        }
        for rule in snapshot.rules.rules where onlyApp == nil || rule.app == nil || rule.app == onlyApp {
            if firing.keys.contains(where: { $0[1] == rule.name }) { continue }
            firing[[onlyApp ?? "", rule.name]] = 0
        }
        for (key, count) in firing {
            gauge("alerts_firing", "Alerts firing now, by app and rule", [("app", key[0]), ("rule", key[1])]).set(
                Double(count))
        }
    }
}
