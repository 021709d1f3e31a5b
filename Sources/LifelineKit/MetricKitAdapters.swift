// The MetricKit adapters: thin, everything they call is in the core (`receive`, `collect`).
// Compiled where MetricKit exists; on Linux, the LifelineKitMetricKitCheck target compiles this same file
// against declaration stand-ins of the MetricKit surface (LIFELINEKIT_METRICKIT_STANDINS), to type-check it.
#if (canImport(MetricKit) && !LIFELINEKIT_METRICKIT_STANDINS) || (LIFELINEKIT_METRICKIT_STANDINS && !canImport(MetricKit))
    import Foundation

    #if canImport(MetricKit)
        import MetricKit
    #else
        import LifelineKit
    #endif

    /// Subscribes LifelineKit to `MXMetricManager.shared`: every metric and diagnostic payload is kept in the
    /// spool, then uploaded. ``start()`` also drains `pastPayloads` and `pastDiagnosticPayloads` (reports
    /// delivered before the subscriber existed); re-delivered ones have the same bytes, hence the same hash,
    /// and are neither kept nor counted twice. Keep the subscriber for the app's lifetime.
    public final class LifelineMetricKitSubscriber: NSObject, MXMetricManagerSubscriber, @unchecked Sendable {
        private let client: LifelineClient

        /// A subscriber forwarding to `client`.
        public init(client: LifelineClient) {
            self.client = client
            super.init()
        }

        /// Subscribes, and drains the past payloads.
        public func start() {
            let manager = MXMetricManager.shared
            manager.add(self)
            forward(manager.pastPayloads.map { $0.jsonRepresentation() }, kind: .metric)
            forward(manager.pastDiagnosticPayloads.map { $0.jsonRepresentation() }, kind: .diagnostic)
        }

        /// Unsubscribes.
        public func stop() {
            MXMetricManager.shared.remove(self)
        }

        /// MetricKit's daily metric payloads.
        public func didReceive(_ payloads: [MXMetricPayload]) {
            forward(payloads.map { $0.jsonRepresentation() }, kind: .metric)
        }

        /// MetricKit's diagnostic payloads (crashes, hangs… usually at the next launch).
        public func didReceive(_ payloads: [MXDiagnosticPayload]) {
            forward(payloads.map { $0.jsonRepresentation() }, kind: .diagnostic)
        }

        private func forward(_ reports: [Data], kind: ReportKind) {
            guard !reports.isEmpty else { return }
            let client = client
            ExpiringActivity.run("LifelineKit: keep and upload MetricKit \(kind.rawValue) reports") {
                await client.receive(reports, kind: kind)
            }
        }
    }

    @available(iOS 27, macOS 27, *)
    extension LifelineClient {
        /// Keeps and uploads every report of the iOS 27 `manager`'s sequences until they end. Pass the app's one
        /// `MetricManager`: two managers each receive a random subset of the reports.
        public nonisolated func collect(from manager: MetricManager) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.collect(manager.metricReports, kind: .metric) }
                group.addTask {
                    for try await report in manager.diagnosticReports {
                        let data = try LifelineClient.encodeReport(report)
                        await withExpiringActivity("LifelineKit: upload a MetricKit diagnostic report") {
                            await self.receive([data], kind: .diagnostic)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    /// Runs work inside `ProcessInfo.performExpiringActivity`, so the system lets it finish when the app goes to
    /// the background (the work is cancelled if the activity expires).
    enum ExpiringActivity {
        static func run(_ reason: String, _ work: @escaping @Sendable () async -> Void) {
            let running = RunningTask()
            ProcessInfo.processInfo.performExpiringActivity(withReason: reason) { expired in
                if expired {
                    running.cancel(orStart: work)
                    return
                }
                let done = DispatchSemaphore(value: 0)
                let started = running.start {
                    await work()
                    done.signal()
                }
                if started { done.wait() }
            }
        }
    }

    /// ``ExpiringActivity/run(_:_:)`` awaited.
    func withExpiringActivity(_ reason: String, _ work: @escaping @Sendable () async -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            ExpiringActivity.run(reason) {
                await work()
                continuation.resume()
            }
        }
    }

    /// The task of an expiring activity, cancelled from the expiry callback.
    private final class RunningTask: @unchecked Sendable {
        private let lock = NSLock()
        private var task: Task<Void, Never>?
        private var cancelled = false

        /// Starts the work unless it runs already; whether it started.
        func start(_ work: @escaping @Sendable () async -> Void) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard task == nil else { return false }
            task = Task { await work() }
            if cancelled { task?.cancel() }
            return true
        }

        /// Cancels the work; if it never started (the activity expired at once), starts it cancelled, so
        /// whoever awaits it is still resumed.
        func cancel(orStart work: @escaping @Sendable () async -> Void) {
            lock.lock()
            defer { lock.unlock() }
            cancelled = true
            if task == nil { task = Task { await work() } }
            task?.cancel()
        }
    }
#endif
