import Foundation

/// Why a report was dropped: the server refused it for good, or its spool file was damaged.
public struct DropReason: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status (400, 401, 403, 413, 422…); `nil` for a damaged spool file.
    public var status: Int?
    /// The server's `error.code` (e.g. `body_too_large`), or `corrupt_spool_file`.
    public var code: String

    /// A reason.
    public init(status: Int?, code: String) {
        self.status = status
        self.code = code
    }

    /// `413 body_too_large`.
    public var description: String { status.map { "\($0) \(code)" } ?? code }
}

/// What happened to the reports of one client since it started.
public struct LifelineCounters: Sendable, Hashable {
    /// Reports written to the spool.
    public var queued = 0
    /// Reports the server acknowledged (`202`), duplicates included.
    public var delivered = 0
    /// Reports already stored: the server said so, or the spool had delivered the same bytes before.
    public var duplicates = 0
    /// Reports refused for good, by reason.
    public var dropped: [DropReason: Int] = [:]
    /// Reports evicted from the spool (over its disk budget or its maximum age), oldest first.
    public var evicted = 0
    /// Requests repeated after a transport error, 408, 429, 5xx or 507.
    public var retries = 0
    /// Reports an adapter delivered that the spool could not write (disk full), so were lost.
    public var unspooled = 0

    /// All dropped reports.
    public var droppedTotal: Int { dropped.values.reduce(0, +) }
}

/// One step of a report's upload, as seen by ``LifelineClient/outcomes()``.
public struct UploadOutcome: Sendable, Hashable {
    /// What happened.
    public enum Event: Sendable, Hashable {
        /// Stored by the server: `accepted` new documents, `duplicates` it already had; `replayed` when it
        /// answered an earlier request with the same `Idempotency-Key` (its documents count as duplicates).
        case delivered(accepted: Int, duplicates: Int, replayed: Bool)
        /// The request failed and will be repeated after `after` (status `nil`: a transport error).
        case retrying(status: Int?, after: Duration, message: String)
        /// Out of attempts for this pass: the report stays in the spool for the next one.
        case deferred(status: Int?, message: String)
        /// Refused for good and deleted.
        case dropped(DropReason, message: String)
        /// Deleted from the spool over its budget or age, never delivered.
        case evicted
    }

    /// The report: the SHA-256 of its bytes, also its `Idempotency-Key`.
    public var reportID: String
    /// Its kind.
    public var kind: ReportKind
    /// Requests made for it in this pass (0 for an eviction).
    public var attempts: Int
    /// What happened.
    public var event: Event
}

/// What ``LifelineClient/submit(_:kind:)`` did with a report.
public enum SubmitResult: Sendable, Hashable {
    /// Written to the spool under this id (the SHA-256 of its bytes).
    case queued(id: String)
    /// The same bytes are in the spool already.
    case alreadyQueued(id: String)
    /// The same bytes were delivered before (e.g. `pastPayloads` drained again): nothing to do.
    case alreadyDelivered(id: String)
    /// Consent is ``Consent/denied``: nothing was kept.
    case notCollected
}
