import LifelineModel
import LifelineStorage
import Logging
import ServiceLifecycle

/// Prunes what the retention policy no longer keeps (the store's ``RetentionRunner``): shortly
/// after start, then every ``interval``; on PostgreSQL only the leader prunes (the others' runs
/// return nil). The cut-offs are whole UTC days, so in effect each day's data goes once, in the
/// first run after midnight UTC; the other runs find nothing and cost a few index probes.
struct RetentionService: Service {
    let runner: any RetentionRunner
    /// False when the policy keeps everything: the service then only waits for shutdown (a
    /// service that returns would stop the application).
    var enabled = true
    /// Time between two runs.
    var interval: Duration
    /// Time from start to the first run (lets the server answer its first requests first).
    var initialDelay: Duration
    let metrics: ServiceMetrics
    let logger: Logger

    func run() async throws {
        guard enabled else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            try await Task.sleep(for: initialDelay)
            while !Task.isCancelled {
                await prune()
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One run; failures are logged and retried at the next run.
    func prune() async {
        let started = ContinuousClock.now
        do {
            guard let report = try await runner.pruneOnce() else { return }
            metrics.pruned(report, at: WallClock.nowSeconds())
            let removed = report.payloads + report.rawDocuments + report.idempotencyKeys + report.alertHistory
            logger.log(
                level: removed > 0 ? .info : .debug, "retention: \(report.summary)",
                metadata: [
                    "data_kept_from": "\(report.dataKeptFrom ?? "forever")",
                    "raw_kept_from": "\(report.rawKeptFrom ?? "forever")",
                    "transactions": "\(report.transactions)", "duration": "\(started.duration(to: .now))",
                ])
        } catch is CancellationError {
            return
        } catch {
            logger.error("retention: pruning failed (retried at the next run)", metadata: ["error": "\(error)"])
        }
    }
}
