import LifelineModel

/// One decoded document to store, normalised: everything ingest decides about it (its day, its
/// bucket convention, the bounds of its values) is decided here, once, before the writer port,
/// so both stores persist the same values.
package struct IngestItem: Sendable, Equatable {
    /// Bundle id of the app the document belongs to (the ingest key's app).
    package var app: String
    /// The decoded document, normalised (``StoredValue/normalized(_:)``). Fixed once made: what
    /// was decided from it (``day``, ``meta``…) must not drift from it.
    package let document: DecodedDocument
    /// SHA-256 of the document's decompressed bytes (32 bytes): the deduplication key per app.
    package var contentHash: [UInt8]
    /// The document as received (gzip bytes), kept as is.
    package var raw: [UInt8]
    /// When the request arrived, epoch milliseconds.
    package var receivedAt: Int64
    /// Metric or diagnostic.
    package let family: DocumentFamily
    /// The device of the payload (a diagnostic payload: its first diagnostic's), values bounded.
    package let meta: DeviceMeta
    /// The payload's time range as sent.
    package let begin: Timestamp?
    package let end: Timestamp?
    /// When it happened: the start of its time range, else when it arrived (epoch seconds).
    package let occurredAt: Int64
    /// The UTC day it counts under.
    package let day: UTCDay
    /// Legacy `jsonRepresentation()` or iOS 27 report.
    package let format: PayloadFormat
    /// Whether it is a device-day (a metric payload but the zero-length 2.0.0 snapshot; every
    /// diagnostic payload).
    package let isDeviceDay: Bool

    package init(app: String, document: DecodedDocument, contentHash: [UInt8], raw: [UInt8], receivedAt: Int64) {
        self.app = app
        self.document = StoredValue.normalized(document)
        self.contentHash = contentHash
        self.raw = raw
        self.receivedAt = receivedAt
        switch self.document.content {
        case .metric(let metric):
            (family, meta, begin, end, format, isDeviceDay) = (
                .metric, metric.meta, metric.begin, metric.end, metric.format, metric.isDeviceDay
            )
        case .diagnostic(let payload):
            (family, meta, begin, end, format, isDeviceDay) = (
                .diagnostic, payload.diagnostics.first?.meta ?? DeviceMeta(), payload.begin, payload.end,
                payload.format, true
            )
        }
        // Floor division: a reception time before 1970 still lands on its own day.
        let arrived = receivedAt >= 0 ? receivedAt / 1_000 : (receivedAt - 999) / 1_000
        occurredAt = begin?.epochSeconds ?? arrived
        day = UTCDay(epochSeconds: occurredAt)
    }
}
