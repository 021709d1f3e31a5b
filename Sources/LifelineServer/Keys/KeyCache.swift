import Crypto
import Foundation
import LifelineStorage
import Synchronization

/// Verifies bearer tokens against the key store, remembering verified keys for a short time so
/// the ingest hot path does not query SQLite on every request.
///
/// A revoked key stops working within ``ttl`` (default 5 s). Unknown tokens are never cached, so
/// random tokens cannot grow the cache.
package final class KeyCache: Sendable {
    private struct Entry {
        var key: APIKey
        var expires: ContinuousClock.Instant
    }

    private let verify: @Sendable (String) async throws -> APIKey?
    private let entries = Mutex<[Data: Entry]>([:])
    private let ttl: Duration
    private let maxEntries = 10_000
    /// Last use per key id since the last ``drainUses()``, epoch seconds.
    private let uses = Mutex<[String: Int64]>([:])

    /// - Parameters:
    ///   - ttl: how long a verified key is trusted without asking the store again.
    ///   - verify: the store's verification (hash + constant-time compare + revocation check).
    package init(ttl: Duration = .seconds(5), verify: @escaping @Sendable (String) async throws -> APIKey?) {
        self.ttl = ttl
        self.verify = verify
    }

    /// A cache in front of `store`'s keys.
    package convenience init(ttl: Duration = .seconds(5), store: any KeyStore) {
        self.init(ttl: ttl) { token in try await store.verifyKey(token: token) }
    }

    /// The key for `token`, or `nil` when it is unknown, revoked or expired. Each hit is noted
    /// for ``drainUses()`` (`last_used_at`, written in batches, never a write per request).
    package func key(for token: String) async throws -> APIKey? {
        let digest = Data(SHA256.hash(data: Data(token.utf8)))
        let now = ContinuousClock.now
        let wall = Int64(Date().timeIntervalSince1970)
        if let hit = entries.withLock({ $0[digest] }), hit.expires > now, !hit.key.isExpired(at: wall) {
            noteUse(hit.key.id, at: wall)
            return hit.key
        }
        guard let key = try await verify(token) else {
            entries.withLock { _ = $0.removeValue(forKey: digest) }
            return nil
        }
        entries.withLock { map in
            if map.count >= maxEntries { map.removeAll(keepingCapacity: true) }
            map[digest] = Entry(key: key, expires: now + ttl)
        }
        noteUse(key.id, at: wall)
        return key
    }

    private func noteUse(_ id: String, at time: Int64) {
        uses.withLock { map in
            // Ids come from verified keys only, so the map is bounded by the number of keys.
            map[id] = max(map[id] ?? 0, time)
        }
    }

    /// The keys used since the last call, with their latest use (epoch seconds); clears the list.
    package func drainUses() -> [String: Int64] {
        uses.withLock { map in
            defer { map.removeAll(keepingCapacity: true) }
            return map
        }
    }
}
