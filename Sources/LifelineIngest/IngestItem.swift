import LifelineModel

/// One decoded document to store.
package struct IngestItem: Sendable, Equatable {
    /// Bundle id of the app the document belongs to (the ingest key's app).
    package var app: String
    /// The decoded document.
    package var document: DecodedDocument
    /// SHA-256 of the document's decompressed bytes (32 bytes): the deduplication key per app.
    package var contentHash: [UInt8]
    /// The document as received (gzip bytes), kept as is.
    package var raw: [UInt8]
    /// When the request arrived, epoch milliseconds.
    package var receivedAt: Int64

    package init(app: String, document: DecodedDocument, contentHash: [UInt8], raw: [UInt8], receivedAt: Int64) {
        self.app = app
        self.document = document
        self.contentHash = contentHash
        self.raw = raw
        self.receivedAt = receivedAt
    }
}
