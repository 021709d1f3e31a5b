/// Spaces payloads `1 / rate` seconds apart across all workers.
actor Pacer {
    private let interval: Duration
    private var next: ContinuousClock.Instant

    init(rate: Double) {
        interval = .nanoseconds(Int64(1e9 / rate))
        next = .now
    }

    /// The instant the caller may send at (the slots are handed out in order).
    func slot() -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        if next < now - .seconds(1) { next = now }  // do not burst to catch up after a stall
        let slot = next
        next = next + interval
        return slot
    }
}

/// The outcome of one device-day: what was generated and how each of its payloads was delivered.
package struct DeviceDayReport: Sendable {
    package var version: String
    package var truth: VersionTruth
    package var deliveries: [(kind: GeneratedPayload.Kind, result: DeliveryResult)]
}

/// Totals of a run, for the summary.
package struct RunSummary: Sendable {
    /// Payloads delivered or attempted, by kind.
    package var sent: [GeneratedPayload.Kind: Int] = [:]
    /// Documents stored for the first time.
    package var accepted = 0
    /// Documents the server already had (including idempotent replays).
    package var duplicates = 0
    /// Answers that were idempotent replays.
    package var replayed = 0
    /// Payloads that finally failed, by status (`"connection"` for connection errors).
    package var errors: [String: Int] = [:]
    /// The first few failure messages.
    package var sampleFailures: [String] = []
    /// Requests repeated after a retryable failure.
    package var retries = 0
    /// Per-payload latency, milliseconds (retries included).
    package var latencies: [Double] = []
    /// Wall time of the run.
    package var elapsed: Duration = .zero
    /// What was generated, by version.
    package var truth = FleetTruth()

    /// All payloads sent.
    package var totalSent: Int { sent.values.reduce(0, +) }
    /// Payloads that finally failed.
    package var totalErrors: Int { errors.values.reduce(0, +) }

    /// Payloads per second over the run.
    package var throughput: Double {
        let seconds = elapsed.milliseconds / 1000
        return seconds > 0 ? Double(totalSent) / seconds : 0
    }

    /// The `p`-th percentile of the latencies (nearest rank), in ms.
    package func latencyPercentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let sorted = latencies.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank - 1, 0), sorted.count - 1)]
    }

    mutating func add(_ report: DeviceDayReport) {
        truth.add(version: report.version, report.truth)
        for (kind, result) in report.deliveries {
            sent[kind, default: 0] += 1
            accepted += result.accepted
            duplicates += result.duplicates
            if result.replayed { replayed += 1 }
            retries += result.attempts - 1
            latencies.append(result.latency.milliseconds)
            if let failure = result.failure {
                errors[result.status.map(String.init) ?? "connection", default: 0] += 1
                if sampleFailures.count < 5 { sampleFailures.append(failure) }
            }
        }
    }
}

/// Plays a simulation into a sink with bounded concurrency and optional pacing.
package enum SimulationRunner {
    /// Runs every device-day of `simulation` (day by day) into `sink`.
    /// - Parameters:
    ///   - concurrency: device-days in flight (each posts its payloads one after the other).
    ///   - rate: payloads per second, paced across workers; `nil` for as fast as the sink takes them.
    ///   - onDeviceDay: called after each device-day, on the caller's task (progress bars).
    package static func run(
        _ simulation: Simulation, into sink: some PayloadSink, concurrency: Int, rate: Double? = nil,
        onDeviceDay: (DeviceDayReport) -> Void = { _ in }
    ) async -> RunSummary {
        let pacer = rate.map { Pacer(rate: $0) }
        let total = simulation.deviceDayCount
        let started = ContinuousClock.now
        var summary = RunSummary()
        await withTaskGroup(of: DeviceDayReport.self) { group in
            var next = 0
            func startNext() {
                guard next < total else { return }
                let n = next
                next += 1
                group.addTask {
                    let day = simulation.deviceDay(at: n)
                    var deliveries: [(GeneratedPayload.Kind, DeliveryResult)] = []
                    for payload in day.payloads {
                        if let pacer {
                            let slot = await pacer.slot()
                            try? await Task.sleep(until: slot, clock: .continuous)
                        }
                        let result = await sink.deliver(payload)
                        deliveries.append((payload.kind, result))
                    }
                    return DeviceDayReport(version: day.version, truth: day.truth, deliveries: deliveries)
                }
            }
            for _ in 0..<max(1, concurrency) { startNext() }
            for await report in group {
                summary.add(report)
                onDeviceDay(report)
                startNext()
            }
        }
        summary.elapsed = ContinuousClock.now - started
        return summary
    }
}
