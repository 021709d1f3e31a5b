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
    let transport: Transport

    /// The current consent.
    public private(set) var consent: Consent
    /// What happened since start.
    public internal(set) var counters = LifelineCounters()

    /// Reports of the spool not finished yet, oldest first.
    var queue: [SpooledReport] = []
    var queuedBytes = 0
    var inFlight: Set<String> = []
    /// Requests made per report in this pass.
    var attempts: [String: Int] = [:]
    /// When a report may be tried again.
    var notBefore: [String: ContinuousClock.Instant] = [:]
    /// Reports out of attempts for this pass.
    var parked: Set<String> = []
    /// Reports not yet looked at by a pass.
    var fresh: Set<String> = []
    /// No request starts before this (`Retry-After`, 507).
    var pausedUntil: ContinuousClock.Instant?
    /// After this, a pass starts no request and defers what is left.
    var deadline: ContinuousClock.Instant?
    var drainTask: Task<Void, Never>?
    var observers: [UUID: AsyncStream<UploadOutcome>.Continuation] = [:]
    var waiters: [String: [CheckedContinuation<UploadOutcome?, Never>]] = [:]
    var passWaiters: [CheckedContinuation<Void, Never>] = []

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

    func append(_ report: SpooledReport) {
        queue.append(report)
        queuedBytes += report.size
        fresh.insert(report.id)
    }

    /// Adds reports on disk the queue does not know (left by an earlier process, or written by another one).
    func rescan() {
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
    func enforceBounds() {
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
    func finish(_ report: SpooledReport, attempts count: Int, event: UploadOutcome.Event?) {
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

    func publish(_ outcome: UploadOutcome) {
        for continuation in observers.values { continuation.yield(outcome) }
    }

    func removeObserver(_ id: UUID) { observers[id] = nil }

    func noteUnspooled() { counters.unspooled += 1 }

    func resumeAllWaiters() {
        for waiter in waiters.values.joined() { waiter.resume(returning: nil) }
        waiters.removeAll()
    }

    func resumePassWaiters() {
        for waiter in passWaiters { waiter.resume() }
        passWaiters.removeAll()
    }
}
