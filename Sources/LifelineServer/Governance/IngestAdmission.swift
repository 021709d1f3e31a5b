import Foundation
import LifelineModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Decides whether an ingest request may proceed, before its body is read: rate limits per key
/// and per client address (429), the per-app daily quota (429), the free-space guard (507), and
/// backpressure on bytes in flight and documents queued for the writer (503). Every refusal names
/// its limit and carries `Retry-After`. Counts are per node (see the README).
package final class IngestAdmission: Sendable {
    /// Why a request was refused, as counted on `/metrics`.
    package enum Refusal: String, Sendable, CaseIterable {
        case keyRate = "ingest_rate_per_key"
        case addressRate = "ingest_rate_per_ip"
        case quota = "app_daily_documents"
        case inflight = "max_inflight_bytes"
        case queue = "max_queued_documents"
        case disk = "min_free_disk_bytes"
    }

    package let limits: GovernanceLimits
    private let keyBuckets: TokenBuckets
    private let addressBuckets: TokenBuckets
    private let trustedProxies: Set<String>
    private let inflight = Atomic<Int>(0)
    private let queuedDocuments: @Sendable () -> Int
    private let receivedSince: @Sendable (_ app: String, _ sinceMilliseconds: Int64) async throws -> Int
    private let disk: FreeSpace
    /// Accepted documents per app on the current UTC day.
    private let quotas = Mutex<[String: (day: UTCDay, count: Int)]>([:])
    private let refusals = Mutex<[String: [Refusal: Int]]>([:])

    /// - Parameters:
    ///   - queuedDocuments: documents waiting for the writer now.
    ///   - receivedSince: documents of an app stored since a time (seeds the quota count).
    ///   - databaseDirectory: where the free-space guard looks.
    package init(
        limits: GovernanceLimits, trustedProxies: [String], databaseDirectory: String,
        queuedDocuments: @escaping @Sendable () -> Int,
        receivedSince: @escaping @Sendable (String, Int64) async throws -> Int
    ) {
        self.limits = limits
        self.keyBuckets = TokenBuckets(rate: limits.ingestRatePerKey, burst: limits.ingestBurstPerKey)
        self.addressBuckets = TokenBuckets(rate: limits.ingestRatePerIP, burst: limits.ingestBurstPerIP)
        self.trustedProxies = Set(trustedProxies)
        self.queuedDocuments = queuedDocuments
        self.receivedSince = receivedSince
        self.disk = FreeSpace(path: databaseDirectory)
    }

    /// The client's address: the peer, or — when the peer is a trusted proxy — the rightmost
    /// address of `X-Forwarded-For` that is not a trusted proxy.
    package func clientAddress(peer: String?, forwardedFor: String?) -> String? {
        guard let peer, trustedProxies.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return hops.reversed().first { !$0.isEmpty && !trustedProxies.contains($0) } ?? peer
    }

    /// Admits a request of `app` sent with key `keyID` from `address`, reserving `bytes` of
    /// body budget; on success the caller must ``release(_:)`` them once the request is done.
    package func admit(keyID: String, app: String, address: String?, bytes: Int) async throws(APIError) {
        if limits.minFreeDiskBytes > 0, let free = disk.freeBytes(), free < limits.minFreeDiskBytes {
            refused(app, .disk)
            throw APIError(
                .init(code: 507, reasonPhrase: "Insufficient Storage"), code: "insufficient_storage",
                "the server's disk has \(free) bytes free, under min_free_disk_bytes (\(limits.minFreeDiskBytes)); nothing was stored, retry later",
                headers: [.retryAfter: "60"])
        }
        if let wait = keyBuckets.take(keyID) {
            refused(app, .keyRate)
            throw Self.tooMany(
                "ingest_rate_per_key",
                "this key is over \(Self.number(limits.ingestRatePerKey)) requests/s (burst \(Self.number(limits.ingestBurstPerKey)))",
                wait)
        }
        if let address, let wait = addressBuckets.take(address) {
            refused(app, .addressRate)
            throw Self.tooMany(
                "ingest_rate_per_ip",
                "this address is over \(Self.number(limits.ingestRatePerIP)) requests/s (burst \(Self.number(limits.ingestBurstPerIP)))",
                wait)
        }
        if let quota = limits.appDailyDocuments {
            let used = await documentsToday(app)
            if used >= quota {
                refused(app, .quota)
                let tomorrow = UTCDay(epochSeconds: WallClock.nowSeconds()).advanced(by: 1).startEpochSeconds
                throw Self.tooMany(
                    "app_daily_documents", "\(app) has stored its \(quota) documents for today (UTC)",
                    Int(max(1, tomorrow - WallClock.nowSeconds())))
            }
        }
        if queuedDocuments() >= limits.maxQueuedDocuments {
            refused(app, .queue)
            throw APIError(
                .serviceUnavailable, code: "max_queued_documents",
                "the writer has \(limits.maxQueuedDocuments) or more documents queued; nothing was stored, retry later",
                headers: [.retryAfter: "1"])
        }
        let total = inflight.add(bytes, ordering: .relaxed).newValue
        if total > limits.maxInflightBytes, total != bytes {
            inflight.subtract(bytes, ordering: .relaxed)
            refused(app, .inflight)
            throw APIError(
                .serviceUnavailable, code: "max_inflight_bytes",
                "\(limits.maxInflightBytes) bytes of bodies are already being received or decoded; retry later",
                headers: [.retryAfter: "1"])
        }
    }

    /// Returns the body budget reserved by ``admit(keyID:app:address:bytes:)``.
    package func release(_ bytes: Int) {
        inflight.subtract(bytes, ordering: .relaxed)
    }

    /// Counts documents stored for `app` (toward the daily quota).
    package func stored(_ count: Int, app: String) {
        guard limits.appDailyDocuments != nil, count > 0 else { return }
        let today = UTCDay(epochSeconds: WallClock.nowSeconds())
        quotas.withLock { quotas in
            if let entry = quotas[app], entry.day == today { quotas[app] = (today, entry.count + count) }
        }
    }

    /// Bytes of bodies in flight now.
    package var inflightBytes: Int { inflight.load(ordering: .relaxed) }

    /// Refusals so far, per app and limit.
    package var refusalCounts: [String: [Refusal: Int]] { refusals.withLock { $0 } }

    /// Free bytes on the database's file system, and whether that is under the guard.
    package func diskStatus() -> (free: Int64?, low: Bool) {
        let free = disk.freeBytes()
        return (free, limits.minFreeDiskBytes > 0 && (free ?? .max) < limits.minFreeDiskBytes)
    }

    private func documentsToday(_ app: String) async -> Int {
        let today = UTCDay(epochSeconds: WallClock.nowSeconds())
        if let entry = quotas.withLock({ $0[app] }), entry.day == today { return entry.count }
        let counted = (try? await receivedSince(app, today.startEpochSeconds * 1000)) ?? 0
        return quotas.withLock { quotas in
            if let entry = quotas[app], entry.day == today { return entry.count }
            quotas[app] = (today, counted)
            return counted
        }
    }

    private func refused(_ app: String, _ refusal: Refusal) {
        refusals.withLock { $0[app, default: [:]][refusal, default: 0] += 1 }
    }

    private static func tooMany(_ code: String, _ message: String, _ seconds: Int) -> APIError {
        APIError(
            .tooManyRequests, code: code, "\(message); retry in \(seconds) s",
            headers: [.retryAfter: String(seconds)])
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// Free bytes of a file system (`statvfs`), read at most once a second.
final class FreeSpace: Sendable {
    let path: String
    private let cache = Mutex<(read: ContinuousClock.Instant, bytes: Int64?)?>(nil)

    init(path: String) {
        self.path = path
    }

    func freeBytes() -> Int64? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0 }), cached.read.duration(to: now) < .seconds(1) { return cached.bytes }
        var stats = statvfs()
        let bytes: Int64? = statvfs(path, &stats) == 0 ? Int64(stats.f_bavail) * Int64(stats.f_frsize) : nil
        cache.withLock { $0 = (now, bytes) }
        return bytes
    }
}
