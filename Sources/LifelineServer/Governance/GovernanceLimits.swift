/// The resource limits of the `limits:` section besides the body limits (``IngestLimits``):
/// rate limits, backpressure, the per-app quota and the free-space guard. Defaults, and the
/// arithmetic behind them, are in the README ("Resource governance").
package struct GovernanceLimits: Sendable, Equatable, Decodable {
    /// Ingest requests per second per ingest key (the whole fleet of one app shares its key). Default 500.
    package var ingestRatePerKey: Double = 500
    /// Burst per ingest key. Default 2,000.
    package var ingestBurstPerKey: Double = 2_000
    /// Ingest requests per second per client address. Default 100 (behind a proxy, set
    /// `server.trusted_proxies`, or this limits the proxy).
    package var ingestRatePerIP: Double = 100
    /// Burst per client address. Default 1,000.
    package var ingestBurstPerIP: Double = 1_000
    /// Bytes of request bodies being received, inflated or decoded at once (the body limit is
    /// reserved per request). Default 128 MiB.
    package var maxInflightBytes: Int = 128 << 20
    /// Documents waiting for the writer. Default 20,000.
    package var maxQueuedDocuments: Int = 20_000
    /// Documents one app may store per UTC day (per node); `nil`: no quota.
    package var appDailyDocuments: Int?
    /// Below this many free bytes on the database's file system ingest answers 507. Default 1 GiB; 0 disables.
    package var minFreeDiskBytes: Int64 = 1 << 30

    package init() {}

    enum CodingKeys: String, CodingKey {
        case ingestRatePerKey = "ingest_rate_per_key"
        case ingestBurstPerKey = "ingest_burst_per_key"
        case ingestRatePerIP = "ingest_rate_per_ip"
        case ingestBurstPerIP = "ingest_burst_per_ip"
        case maxInflightBytes = "max_inflight_bytes"
        case maxQueuedDocuments = "max_queued_documents"
        case appDailyDocuments = "app_daily_documents"
        case minFreeDiskBytes = "min_free_disk_bytes"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = GovernanceLimits()
        ingestRatePerKey = try c.decodeIfPresent(Double.self, forKey: .ingestRatePerKey) ?? d.ingestRatePerKey
        ingestBurstPerKey = try c.decodeIfPresent(Double.self, forKey: .ingestBurstPerKey) ?? d.ingestBurstPerKey
        ingestRatePerIP = try c.decodeIfPresent(Double.self, forKey: .ingestRatePerIP) ?? d.ingestRatePerIP
        ingestBurstPerIP = try c.decodeIfPresent(Double.self, forKey: .ingestBurstPerIP) ?? d.ingestBurstPerIP
        maxInflightBytes = try c.decodeIfPresent(Int.self, forKey: .maxInflightBytes) ?? d.maxInflightBytes
        maxQueuedDocuments = try c.decodeIfPresent(Int.self, forKey: .maxQueuedDocuments) ?? d.maxQueuedDocuments
        appDailyDocuments = try c.decodeIfPresent(Int.self, forKey: .appDailyDocuments)
        minFreeDiskBytes = try c.decodeIfPresent(Int64.self, forKey: .minFreeDiskBytes) ?? d.minFreeDiskBytes
    }
}
