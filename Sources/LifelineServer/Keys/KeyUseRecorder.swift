import LifelineStore
import Logging
import ServiceLifecycle

/// Writes the keys' `last_used_at` from the ``KeyCache``'s notes once per ``interval``, and once
/// more on shutdown: one short transaction a minute instead of a write per request.
struct KeyUseRecorder: Service {
    let keys: KeyCache
    let database: Database
    var interval: Duration = .seconds(60)
    let logger: Logger

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
            try await database.write { try $0.recordKeyUse(uses) }
        } catch {
            logger.warning("could not record key use", metadata: ["error": "\(error)"])
        }
    }
}
