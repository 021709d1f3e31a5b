import LifelineStorage
import Logging
import ServiceLifecycle

/// Writes the keys' `last_used_at` from the ``KeyCache``'s notes once per ``interval``, and once
/// more on shutdown: one short transaction a minute instead of a write per request.
struct KeyUseRecorder: Service {
    let keys: KeyCache
    /// Writes the uses (one transaction).
    let record: @Sendable ([String: Int64]) async throws -> Void
    var interval: Duration = .seconds(60)
    let logger: Logger

    init(keys: KeyCache, store: any KeyStore, logger: Logger) {
        self.init(keys: keys, logger: logger) { uses in try await store.recordKeyUses(uses) }
    }

    init(
        keys: KeyCache, interval: Duration = .seconds(60), logger: Logger,
        record: @escaping @Sendable ([String: Int64]) async throws -> Void
    ) {
        self.keys = keys
        self.record = record
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await flush()
            }
        }
        await flush()
    }

    /// Writes what the cache noted since the last flush.
    func flush() async {
        let uses = keys.drainUses()
        guard !uses.isEmpty else { return }
        do {
            try await record(uses)
        } catch {
            logger.warning("could not record key use", metadata: ["error": "\(error)"])
        }
    }
}
