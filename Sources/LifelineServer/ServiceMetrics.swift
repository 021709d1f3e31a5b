import CoreMetrics
import Prometheus

/// The service's own health metrics, recorded through swift-metrics into one Prometheus registry
/// per application (not the process-wide `MetricsSystem`, so every server — and every test — has
/// its own counters).
///
/// Label values are bounded: `route` is the matched route pattern (`/v1/apps/{bundleId}/exits`,
/// `unmatched` for 404s), `method` the HTTP method, `status` the response code, `outcome` one of
/// accepted / duplicate / refused.
package final class ServiceMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    static let requests = "lifeline_http_requests_total"
    static let requestDuration = "lifeline_http_request_duration_seconds"
    static let ingestDuration = "lifeline_ingest_duration_seconds"
    static let ingestPayloads = "lifeline_ingest_payloads_total"
    static let batchRequests = "lifeline_writer_batch_requests"

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5),
        ]
        factory.valueHistogramBuckets[Self.batchRequests] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
        self.factory = factory
    }

    /// One answered HTTP request.
    func request(route: String, method: String, status: Int, duration: Duration) {
        Counter(
            label: Self.requests, dimensions: [("route", route), ("method", method), ("status", String(status))],
            factory: factory
        ).increment()
        Timer(label: Self.requestDuration, dimensions: [("route", route), ("method", method)], factory: factory)
            .record(duration: duration)
    }

    /// One ingest request: its documents by outcome, and how long it took until the durable answer.
    func ingest(accepted: Int, duplicates: Int, refused: Int, duration: Duration) {
        for (outcome, count) in [("accepted", accepted), ("duplicate", duplicates), ("refused", refused)]
        where count > 0 {
            Counter(label: Self.ingestPayloads, dimensions: [("outcome", outcome)], factory: factory)
                .increment(by: count)
        }
        Timer(label: Self.ingestDuration, factory: factory).record(duration: duration)
    }

    /// One transaction of the writer, with the number of requests it committed together.
    func batch(requests: Int) {
        Recorder(label: Self.batchRequests, aggregate: true, factory: factory).record(requests)
    }
}

extension Timer {
    fileprivate func record(duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
