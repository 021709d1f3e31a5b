import Foundation

/// Starts LifelineKit.
///
/// ```swift
/// let lifeline = try await Lifeline.start(LifelineConfiguration(serverURL: url, ingestKey: key))
/// ```
public enum Lifeline {
    /// Opens the spool, applies its bounds and, when consent allows, starts uploading what it holds.
    /// Call it once per process and keep the client.
    public static func start(_ configuration: LifelineConfiguration) async throws -> LifelineClient {
        let client = try LifelineClient(configuration)
        await client.resume()
        return client
    }
}

/// Keeps MetricKit reports on disk until the Lifeline server has stored them.
///
/// Every report is written to the spool (atomic write, fsync, rename; named by the SHA-256 of its bytes)
/// before any upload starts. Uploads are gzipped, oldest first, at most
/// ``LifelineConfiguration/maxConcurrentUploads`` at once, with the content hash as `Idempotency-Key`.
/// Transport errors, 408, 429 and 5xx are retried with exponential backoff and jitter, honouring
/// `Retry-After` (no request leaves before the time it names); 507 pauses every upload; other 4xx drop the
/// report and count it by reason.
public actor LifelineClient {
    /// The configuration it was started with.
    public nonisolated let configuration: LifelineConfiguration
    let spool: Spool
    private let transport: Transport

    /// The current consent.
    public private(set) var consent: Consent
    /// What happened since start.
    public private(set) var counters = LifelineCounters()

    /// Reports of the spool not finished yet, oldest first.
    private var queue: [SpooledReport] = []
    private var queuedBytes = 0
    private var inFlight: Set<String> = []
    /// Requests made per report in this pass.
    private var attempts: [String: Int] = [:]
    /// When a report may be tried again.
    private var notBefore: [String: ContinuousClock.Instant] = [:]
    /// Reports out of attempts for this pass.
    private var parked: Set<String> = []
    /// Reports not yet looked at by a pass.
    private var fresh: Set<String> = []
    /// No request starts before this (`Retry-After`, 507).
    private var pausedUntil: ContinuousClock.Instant?
    /// After this, a pass starts no request and defers what is left.
    private var deadline: ContinuousClock.Instant?
    private var drainTask: Task<Void, Never>?
    private var observers: [UUID: AsyncStream<UploadOutcome>.Continuation] = [:]
    private var waiters: [String: [CheckedContinuation<UploadOutcome?, Never>]] = [:]
    private var passWaiters: [CheckedContinuation<Void, Never>] = []

    init(_ configuration: LifelineConfiguration) throws {
        self.configuration = configuration
        spool = try Spool(directory: configuration.spoolDirectory)
        transport = Transport(
            baseURL: configuration.serverURL, key: configuration.ingestKey, timeout: configuration.requestTimeout,
            maxConnections: configuration.maxConcurrentUploads)
        consent = spool.storedConsent() ?? (configuration.requiresConsent ? .pending : .granted)
    }

    /// Loads the spool, applies its bounds and starts a pass if consent allows.
    func resume() {
        if consent == .denied {
            spool.removeAll()
            return
        }
        spool.pruneMarkers(olderThan: configuration.maxReportAge.seconds)
        rescan()
        enforceBounds()
        scheduleDrain()
    }

    // MARK: - Public API

    /// Keeps `report` (its JSON as MetricKit produced it) in the spool, then uploads it if consent allows.
    /// Returns once the report is on disk.
    @discardableResult
    public func submit(_ report: Data, kind: ReportKind) throws -> SubmitResult {
        guard consent != .denied else { return .notCollected }
        let id = ContentHash.hex(report)
        if queue.contains(where: { $0.id == id }) { return .alreadyQueued(id: id) }
        if spool.wasDelivered(id) {
            counters.duplicates += 1
            return .alreadyDelivered(id: id)
        }
        let written = try spool.write(report, id: id, kind: kind)
        if written { counters.queued += 1 }
        append(SpooledReport(id: id, kind: kind, size: report.count, date: Date()))
        enforceBounds()
        scheduleDrain()
        return written ? .queued(id: id) : .alreadyQueued(id: id)
    }

    /// Encodes `report` with `JSONEncoder` (how iOS 27 `MetricReport`s and `DiagnosticReport`s are sent; default
    /// strategies, keys sorted so the same report always gives the same bytes and hash) and submits it.
    @discardableResult
    public func submit(encoding report: some Encodable, kind: ReportKind) throws -> SubmitResult {
        try submit(Self.encode(report), kind: kind)
    }

    /// A report's JSON as LifelineKit keeps it: `JSONEncoder` with default strategies and sorted keys (so the
    /// same report always has the same bytes, hence the same hash).
    public static func encodeReport(_ report: some Encodable) throws -> Data {
        try encode(report)
    }

    static func encode(_ report: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(report)
    }

    /// Submits every report `reports` yields, encoded as ``submit(encoding:kind:)`` does, until it ends (e.g. an
    /// iOS 27 `MetricManager` sequence).
    public nonisolated func collect<Reports: AsyncSequence>(
        _ reports: sending Reports, kind: ReportKind
    ) async throws where Reports.Element: Encodable {
        for try await report in reports {
            try await submit(Self.encode(report), kind: kind)
        }
    }

    /// Sets the consent and persists it: ``Consent/granted`` uploads the spool, ``Consent/pending`` stops
    /// uploading (reports are still kept), ``Consent/denied`` stops collecting and deletes the spool.
    public func setConsent(_ consent: Consent) async throws {
        try spool.storeConsent(consent)
        self.consent = consent
        switch consent {
        case .granted:
            scheduleDrain()
        case .pending:
            drainTask?.cancel()
        case .denied:
            drainTask?.cancel()
            while let task = drainTask { await task.value }
            spool.removeAll()
            queue.removeAll()
            queuedBytes = 0
            fresh.removeAll()
            resumeAllWaiters()
        }
    }

    /// Reports in the spool, not yet delivered.
    public var pendingReports: Int { queue.count }

    /// Uploads what the spool holds and returns when it is empty, when what is left waits for a later pass,
    /// or after `timeout`; returns the number of reports left.
    @discardableResult
    public func flush(timeout: Duration? = nil) async -> Int {
        rescan()
        scheduleDrain()
        guard drainTask != nil else { return queue.count }
        if let timeout {
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.resumePassWaiters()
            }
            await withCheckedContinuation { passWaiters.append($0) }
            timer.cancel()
        } else {
            await withCheckedContinuation { passWaiters.append($0) }
        }
        return queue.count
    }

    /// Every upload outcome from now on, until the caller stops iterating.
    public func outcomes() -> AsyncStream<UploadOutcome> {
        let (stream, continuation) = AsyncStream.makeStream(of: UploadOutcome.self, bufferingPolicy: .unbounded)
        let id = UUID()
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    /// Stops uploading (requests in flight are cancelled; their reports stay in the spool).
    public func stop() async {
        drainTask?.cancel()
        while let task = drainTask { await task.value }
    }

    // MARK: - Package API (the simulator)

    /// Stops starting requests at `deadline`: what is left is deferred and stays in the spool.
    package func giveUp(at deadline: ContinuousClock.Instant?) {
        self.deadline = deadline
    }

    /// Submits `report` and waits for its outcome in this pass: delivered, dropped, evicted or deferred
    /// (`nil` when it was already delivered, consent does not allow uploads, or the client stopped).
    package func submitAndWait(_ report: Data, kind: ReportKind) async throws -> (SubmitResult, UploadOutcome?) {
        let result = try submit(report, kind: kind)
        switch result {
        case .queued(let id), .alreadyQueued(let id):
            guard drainTask != nil, queue.contains(where: { $0.id == id }) else { return (result, nil) }
            let outcome = await withCheckedContinuation { waiters[id, default: []].append($0) }
            return (result, outcome)
        case .alreadyDelivered, .notCollected:
            return (result, nil)
        }
    }

    // MARK: - The queue

    private func append(_ report: SpooledReport) {
        queue.append(report)
        queuedBytes += report.size
        fresh.insert(report.id)
    }

    /// Adds reports on disk the queue does not know (left by an earlier process, or written by another one).
    private func rescan() {
        guard consent != .denied else { return }
        let known = Set(queue.map(\.id))
        let missing = spool.reports().filter { !known.contains($0.id) }
        guard !missing.isEmpty else { return }
        for report in missing {
            queue.append(report)
            queuedBytes += report.size
            fresh.insert(report.id)
        }
        queue.sort { ($0.date, $0.id) < ($1.date, $1.id) }
    }

    /// Evicts the oldest reports (not in flight) past the maximum age, then past the disk budget.
    private func enforceBounds() {
        let oldest = Date().addingTimeInterval(-configuration.maxReportAge.seconds)
        var index = 0
        while index < queue.count {
            let report = queue[index]
            let tooOld = report.date < oldest
            guard tooOld || queuedBytes > configuration.maxSpoolBytes else { break }
            if inFlight.contains(report.id) {
                index += 1
                continue
            }
            spool.remove(report)
            counters.evicted += 1
            finish(report, attempts: 0, event: .evicted)
        }
    }

    /// Removes a finished report from the queue, tells the observers and the waiters.
    private func finish(_ report: SpooledReport, attempts count: Int, event: UploadOutcome.Event?) {
        if let index = queue.firstIndex(where: { $0.id == report.id }) {
            queuedBytes -= queue[index].size
            queue.remove(at: index)
        }
        attempts[report.id] = nil
        notBefore[report.id] = nil
        parked.remove(report.id)
        fresh.remove(report.id)
        let outcome = event.map { UploadOutcome(reportID: report.id, kind: report.kind, attempts: count, event: $0) }
        if let outcome { publish(outcome) }
        for waiter in waiters.removeValue(forKey: report.id) ?? [] { waiter.resume(returning: outcome) }
    }

    private func publish(_ outcome: UploadOutcome) {
        for continuation in observers.values { continuation.yield(outcome) }
    }

    private func removeObserver(_ id: UUID) { observers[id] = nil }

    func noteUnspooled() { counters.unspooled += 1 }

    private func resumeAllWaiters() {
        for waiter in waiters.values.joined() { waiter.resume(returning: nil) }
        waiters.removeAll()
    }

    private func resumePassWaiters() {
        for waiter in passWaiters { waiter.resume() }
        passWaiters.removeAll()
    }

    // MARK: - Passes

    private func scheduleDrain() {
        guard consent == .granted, drainTask == nil, !queue.isEmpty else { return }
        drainTask = Task { await self.drain() }
    }

    /// Passes until nothing new arrives: reports out of attempts wait for the next one.
    private func drain() async {
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

    private struct Attempt: Sendable {
        var report: SpooledReport
        var result: Result
        enum Result: Sendable {
            case answer(HTTPAnswer)
            case transportError(String)
            case gone
            case damaged
        }
    }

    private func pass() async {
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

    private func nextReady(_ now: ContinuousClock.Instant) -> SpooledReport? {
        queue.first { report in
            !inFlight.contains(report.id) && !parked.contains(report.id)
                && (notBefore[report.id].map { $0 <= now } ?? true)
        }
    }

    /// When the next request may start; `nil` when every report is in flight, parked or finished.
    private func earliestWake(_ now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
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
    private func deferWaiting(message: String) {
        for report in queue where !inFlight.contains(report.id) && !parked.contains(report.id) {
            park(report, status: nil, message: message)
        }
        fresh.removeAll()
    }

    private func park(_ report: SpooledReport, status: Int?, message: String) {
        parked.insert(report.id)
        let outcome = UploadOutcome(
            reportID: report.id, kind: report.kind, attempts: attempts[report.id] ?? 0,
            event: .deferred(status: status, message: message))
        publish(outcome)
        for waiter in waiters.removeValue(forKey: report.id) ?? [] { waiter.resume(returning: outcome) }
    }

    private static func attempt(_ report: SpooledReport, spool: Spool, transport: Transport) async -> Attempt {
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

    private func handle(_ done: Attempt) {
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

    private func drop(_ report: SpooledReport, _ reason: DropReason, _ message: String) {
        counters.dropped[reason, default: 0] += 1
        finish(report, attempts: attempts[report.id] ?? 1, event: .dropped(reason, message: message))
    }

    private func retry(_ report: SpooledReport, status: Int?, retryAfter: Duration?, message: String) {
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
    private func pause(for delay: Duration) {
        let until = ContinuousClock.now + delay
        pausedUntil = max(pausedUntil ?? until, until)
    }

    private static func describe(_ answer: HTTPAnswer) -> String {
        if let error = answer.error { return "HTTP \(answer.status) \(error.code): \(error.message)" }
        return "HTTP \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
    }
}
