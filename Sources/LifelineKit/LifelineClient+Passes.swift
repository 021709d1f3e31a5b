import Foundation

/// Upload passes: oldest report first, bounded concurrency, backoff, Retry-After and 507 pauses.
extension LifelineClient {
    func scheduleDrain() {
        guard consent == .granted, drainTask == nil, !queue.isEmpty else { return }
        drainTask = Task { await self.drain() }
    }

    /// Passes until nothing new arrives: reports out of attempts wait for the next one.
    func drain() async {
        repeat {
            await pass()
        } while !Task.isCancelled && consent == .granted && !fresh.isEmpty
        parked.removeAll()
        attempts.removeAll()
        notBefore.removeAll()
        drainTask = nil
        resumeAllWaiters()
        resumePassWaiters()
    }

    struct Attempt: Sendable {
        var report: SpooledReport
        var result: Result
        enum Result: Sendable {
            case answer(HTTPAnswer)
            case transportError(String)
            case gone
            case damaged
        }
    }

    func pass() async {
        let limit = max(1, configuration.maxConcurrentUploads)
        await withTaskGroup(of: Attempt.self) { group in
            var running = 0
            while !Task.isCancelled && consent == .granted {
                let now = ContinuousClock.now
                if let deadline, now >= deadline {
                    deferWaiting(message: "gave up at the deadline")
                    if running == 0 { break }
                } else if pausedUntil.map({ $0 <= now }) ?? true {
                    while running < limit, let report = nextReady(now) {
                        inFlight.insert(report.id)
                        fresh.remove(report.id)
                        attempts[report.id, default: 0] += 1
                        running += 1
                        let spool = spool
                        let transport = transport
                        group.addTask { await Self.attempt(report, spool: spool, transport: transport) }
                    }
                }
                if running > 0 {
                    if let done = await group.next() {
                        running -= 1
                        inFlight.remove(done.report.id)
                        handle(done)
                    }
                    continue
                }
                guard let wake = earliestWake(now) else { break }
                var until = min(wake, now + .milliseconds(100))
                if let deadline { until = min(until, deadline) }
                try? await Task.sleep(until: until, clock: .continuous)
            }
            for await done in group {
                inFlight.remove(done.report.id)
                handle(done)
            }
        }
    }

    func nextReady(_ now: ContinuousClock.Instant) -> SpooledReport? {
        queue.first { report in
            !inFlight.contains(report.id) && !parked.contains(report.id)
                && (notBefore[report.id].map { $0 <= now } ?? true)
        }
    }

    /// When the next request may start; `nil` when every report is in flight, parked or finished.
    func earliestWake(_ now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        for report in queue where !inFlight.contains(report.id) && !parked.contains(report.id) {
            let at = notBefore[report.id] ?? now
            earliest = earliest.map { min($0, at) } ?? at
            if at <= now { break }
        }
        guard let earliest else { return nil }
        return max(earliest, pausedUntil ?? earliest)
    }

    /// Parks every report not in flight (the deadline passed).
    func deferWaiting(message: String) {
        for report in queue where !inFlight.contains(report.id) && !parked.contains(report.id) {
            park(report, status: nil, message: message)
        }
        fresh.removeAll()
    }

    func park(_ report: SpooledReport, status: Int?, message: String) {
        parked.insert(report.id)
        let outcome = UploadOutcome(
            reportID: report.id, kind: report.kind, attempts: attempts[report.id] ?? 0,
            event: .deferred(status: status, message: message))
        publish(outcome)
        for waiter in waiters.removeValue(forKey: report.id) ?? [] { waiter.resume(returning: outcome) }
    }

    static func attempt(_ report: SpooledReport, spool: Spool, transport: Transport) async -> Attempt {
        let data: Data
        do {
            guard let read = try spool.read(report) else { return Attempt(report: report, result: .gone) }
            data = read
        } catch {
            return Attempt(report: report, result: .damaged)
        }
        do {
            let gzipped = try Gzip.compress(data)
            let answer = try await transport.post(gzipped, kind: report.kind, id: report.id)
            return Attempt(report: report, result: .answer(answer))
        } catch {
            return Attempt(report: report, result: .transportError("\(error)"))
        }
    }

    func handle(_ done: Attempt) {
        let report = done.report
        let count = attempts[report.id] ?? 1
        switch done.result {
        case .gone:
            finish(report, attempts: count, event: nil)
        case .damaged:
            spool.remove(report)
            drop(
                report, DropReason(status: nil, code: "corrupt_spool_file"), "the spooled file does not match its hash")
        case .transportError(let message):
            retry(report, status: nil, retryAfter: nil, message: message)
        case .answer(let answer):
            switch answer.status {
            case 200..<300:
                spool.remove(report)
                spool.markDelivered(report.id)
                let counts = answer.counts
                let duplicates = answer.replayed ? counts.accepted + counts.duplicates : counts.duplicates
                counters.delivered += 1
                if duplicates > 0 { counters.duplicates += 1 }
                finish(
                    report, attempts: count,
                    event: .delivered(
                        accepted: answer.replayed ? 0 : counts.accepted, duplicates: duplicates,
                        replayed: answer.replayed))
            case 507:
                let wait = min(answer.retryAfter ?? configuration.retry.storageWait, configuration.retry.maxRetryAfter)
                pause(for: wait)
                attempts[report.id] = max(0, count - 1)  // the server's disk, not the report: no attempt used
                counters.retries += 1
                notBefore[report.id] = ContinuousClock.now + wait
                publish(
                    UploadOutcome(
                        reportID: report.id, kind: report.kind, attempts: count,
                        event: .retrying(status: 507, after: wait, message: Self.describe(answer))))
            case 408, 429, 500...:
                retry(report, status: answer.status, retryAfter: answer.retryAfter, message: Self.describe(answer))
            case 400..<500:
                spool.remove(report)
                let code = answer.error?.code ?? "http_\(answer.status)"
                drop(report, DropReason(status: answer.status, code: code), Self.describe(answer))
            default:
                retry(report, status: answer.status, retryAfter: answer.retryAfter, message: Self.describe(answer))
            }
        }
    }

    func drop(_ report: SpooledReport, _ reason: DropReason, _ message: String) {
        counters.dropped[reason, default: 0] += 1
        finish(report, attempts: attempts[report.id] ?? 1, event: .dropped(reason, message: message))
    }

    func retry(_ report: SpooledReport, status: Int?, retryAfter: Duration?, message: String) {
        let count = attempts[report.id] ?? 1
        let policy = configuration.retry
        if let limit = policy.maxAttemptsPerPass, count >= limit {
            if let retryAfter { pause(for: min(retryAfter, policy.maxRetryAfter)) }
            park(report, status: status, message: message)
            return
        }
        let delay: Duration
        if let retryAfter {
            delay = min(retryAfter, policy.maxRetryAfter)
            pause(for: delay)
        } else {
            let exponential = policy.baseDelay * (1 << min(count - 1, 30))
            delay = min(exponential, policy.maxDelay) * Double.random(in: 0.5...1)
        }
        notBefore[report.id] = ContinuousClock.now + delay
        counters.retries += 1
        publish(
            UploadOutcome(
                reportID: report.id, kind: report.kind, attempts: count,
                event: .retrying(status: status, after: delay, message: message)))
    }

    /// No request starts for `delay` (a `Retry-After` applies to the key, so to every report).
    func pause(for delay: Duration) {
        let until = ContinuousClock.now + delay
        pausedUntil = max(pausedUntil ?? until, until)
    }

    static func describe(_ answer: HTTPAnswer) -> String {
        if let error = answer.error { return "HTTP \(answer.status) \(error.code): \(error.message)" }
        return "HTTP \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
    }
}
