import Foundation

/// What a report is: the endpoint it goes to.
public enum ReportKind: String, Sendable, Hashable, CaseIterable {
    /// A metric payload (`MXMetricPayload` JSON or an iOS 27 `MetricReport`): `POST /v1/metrics`.
    case metric
    /// A diagnostic payload (`MXDiagnosticPayload` JSON or an iOS 27 `DiagnosticReport`): `POST /v1/diagnostics`.
    case diagnostic

    var path: String { self == .metric ? "/v1/metrics" : "/v1/diagnostics" }
}

/// Whether reports may leave the device.
public enum Consent: String, Sendable, Hashable {
    /// Reports are kept in the spool, nothing is uploaded.
    case pending
    /// Reports are uploaded.
    case granted
    /// Nothing is collected and the spool is deleted.
    case denied
}

/// How a ``LifelineClient`` retries and bounds what it keeps.
public struct RetryPolicy: Sendable, Hashable {
    /// The first backoff; it doubles per retry of a report.
    public var baseDelay: Duration
    /// The largest backoff.
    public var maxDelay: Duration
    /// The longest `Retry-After` honoured (a longer one is capped to this).
    public var maxRetryAfter: Duration
    /// How long a `507 Insufficient Storage` without `Retry-After` pauses every upload.
    public var storageWait: Duration
    /// Attempts of one report in one pass; `nil` retries until delivered (or the pass's deadline).
    /// A report out of attempts stays in the spool for the next pass (the next start, report or flush).
    public var maxAttemptsPerPass: Int?

    /// A policy; the defaults suit an app (1 s doubling to 5 min, at most 8 attempts per pass).
    public init(
        baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), maxRetryAfter: Duration = .seconds(3600),
        storageWait: Duration = .seconds(600), maxAttemptsPerPass: Int? = 8
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.storageWait = storageWait
        self.maxAttemptsPerPass = maxAttemptsPerPass
    }
}

/// Everything ``Lifeline/start(_:)`` needs.
public struct LifelineConfiguration: Sendable {
    /// The Lifeline server, e.g. `https://lifeline.example.com`.
    public var serverURL: URL
    /// The app's ingest key (`lifeline keys create --role ingest --app BUNDLE`).
    public var ingestKey: String
    /// Where reports are kept until delivered; default `Application Support/LifelineKit/spool`.
    public var spoolDirectory: URL
    /// Whether the app asks the user first: then nothing is uploaded before ``Consent/granted``.
    public var requiresConsent: Bool
    /// The spool's disk budget in bytes; the oldest reports are evicted past it.
    public var maxSpoolBytes: Int
    /// The oldest report kept; older ones are evicted.
    public var maxReportAge: Duration
    /// Uploads in flight at once.
    public var maxConcurrentUploads: Int
    /// Retries and backoff.
    public var retry: RetryPolicy
    /// How long one request may take.
    public var requestTimeout: Duration

    /// A configuration with the defaults: 20 MB and 30 days of spool, 2 uploads at once.
    public init(
        serverURL: URL, ingestKey: String, spoolDirectory: URL? = nil, requiresConsent: Bool = false,
        maxSpoolBytes: Int = 20_000_000, maxReportAge: Duration = .seconds(30 * 86_400), maxConcurrentUploads: Int = 2,
        retry: RetryPolicy = RetryPolicy(), requestTimeout: Duration = .seconds(60)
    ) {
        self.serverURL = serverURL
        self.ingestKey = ingestKey
        self.spoolDirectory = spoolDirectory ?? Self.defaultSpoolDirectory
        self.requiresConsent = requiresConsent
        self.maxSpoolBytes = maxSpoolBytes
        self.maxReportAge = maxReportAge
        self.maxConcurrentUploads = maxConcurrentUploads
        self.retry = retry
        self.requestTimeout = requestTimeout
    }

    /// `Application Support/LifelineKit/spool` of the app (the temporary directory if there is none).
    public static var defaultSpoolDirectory: URL {
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("LifelineKit/spool", isDirectory: true)
    }
}
