/// A body Lifeline cannot read yet (a report of a major version it does not know), kept as
/// received: stored raw, deduplicated by content, counted nowhere, so nothing a device sent is
/// lost and a release that reads it can fold it later.
package struct UnreadDocument: Sendable, Equatable {
    /// Bundle id of the app (the ingest key's app).
    package var app: String
    /// SHA-256 of the decompressed body (32 bytes): the deduplication key per app.
    package var contentHash: [UInt8]
    /// The body as received if it was gzip, else gzip-compressed.
    package var raw: [UInt8]
    /// When the request arrived, epoch milliseconds.
    package var receivedAt: Int64
    /// Why it was not read (the decoder's code, e.g. `unsupported_version`).
    package var reason: String
    /// The decoder's message (names the version).
    package var detail: String

    package init(app: String, contentHash: [UInt8], raw: [UInt8], receivedAt: Int64, reason: String, detail: String) {
        self.app = app
        self.contentHash = contentHash
        self.raw = raw
        self.receivedAt = receivedAt
        self.reason = reason
        self.detail = detail
    }
}
