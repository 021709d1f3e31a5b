import LifelineStorage
import Prometheus

/// The service's own health metrics, in one Prometheus registry per application (not a
/// process-wide one, so every server — and every test — has its own counters), each with its
/// HELP text and base units (`promtool check metrics` passes).
///
/// Label values are bounded: `route` is the matched route pattern (`/v1/apps/{bundleId}/exits`,
/// `unmatched` for 404s), `method` the HTTP method, `status` the response code, `outcome` one of
/// accepted / duplicate / refused.
package final class ServiceMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry

    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]

    /// Requests per writer transaction, made once: `batch(requests:)` runs on the writer thread,
    /// where looking it up in the registry at every commit cost ~3 % of the thread (`perf`).
    private let batchRequests: ValueHistogram

    package init() {
        registry = PrometheusCollectorRegistry()
        batchRequests = registry.makeValueHistogram(
            descriptor: .init(
                namespace: "lifeline", subsystem: "writer", metricName: "batch_requests", unitName: "",
                helpText: "Ingest requests committed together in one writer transaction"),
            labels: [], buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256])
    }

    /// One answered HTTP request.
    func request(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "lifeline", subsystem: "http", metricName: "requests", unitName: "total",
                helpText: "HTTP requests answered, by route pattern, method and status"),
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "lifeline", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                helpText: "Time from request to response, by route pattern and method"),
            labels: [("route", route), ("method", method)], buckets: Self.durationBuckets
        ).record(duration)
    }

    /// One ingest request: its documents by outcome, and how long it took until the durable answer.
    func ingest(accepted: Int, duplicates: Int, refused: Int, keptRaw: Int = 0, duration: Duration) {
        for (outcome, count) in [
            ("accepted", accepted), ("duplicate", duplicates), ("refused", refused), ("kept_raw", keptRaw),
        ]
        where count > 0 {
            registry.makeCounter(
                descriptor: .init(
                    namespace: "lifeline", subsystem: "ingest", metricName: "payloads", unitName: "total",
                    helpText:
                        "Ingested documents by outcome (accepted, duplicate, refused request, kept_raw: a format not read yet, stored raw)"
                ),
                labels: [("outcome", outcome)]
            ).increment(by: Int64(count))
        }
        registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "lifeline", subsystem: "ingest", metricName: "duration", unitName: "seconds",
                helpText: "Time from an ingest request to its durable answer (or refusal)"),
            labels: [], buckets: Self.durationBuckets
        ).record(duration)
    }

    /// One transaction of the writer, with the number of requests it committed together.
    func batch(requests: Int) {
        batchRequests.record(Double(requests))
    }

    /// One pruning run: what it removed, by kind, and when it ended.
    func pruned(_ report: PruneReport, at seconds: Int64) {
        for (kind, count) in [
            ("payload", report.payloads), ("raw_document", report.rawDocuments), ("rollup_row", report.rollupRows),
            ("crash_group", report.crashGroups), ("idempotency_record", report.idempotencyKeys),
            ("alert_history", report.alertHistory), ("dashboard_session", report.dashboardSessions),
            ("page_returned", report.returnedPages),
        ] {
            registry.makeCounter(
                descriptor: .init(
                    namespace: "lifeline", subsystem: "retention", metricName: "removed", unitName: "total",
                    helpText: "Rows removed by the retention pruner, by kind (pages returned to the file system too)"),
                labels: [("kind", kind)]
            ).increment(by: Int64(count))
        }
        registry.makeGauge(
            descriptor: .init(
                namespace: "lifeline", subsystem: "retention", metricName: "last_run", unitName: "timestamp_seconds",
                helpText: "When the retention pruner last finished a run (Unix time)"),
            labels: []
        ).set(Double(seconds))
    }
}
