/// A row of `payloads` with its dimensions resolved and its raw document.
package struct StoredPayload: Sendable, Equatable {
    package var id: Int64
    /// Bundle id.
    package var app: String
    package var kind: PayloadKind
    package var appVersion: String?
    package var build: String?
    package var osVersion: String?
    package var deviceType: String?
    package var region: String?
    package var architecture: String?
    /// `YYYY-MM-DD` (UTC) of the window begin, or of the received time without one.
    package var day: String
    /// Window begin and end, epoch seconds.
    package var begin: Int64?
    package var end: Int64?
    /// Timestamp texts, kept only when they could not be parsed.
    package var beginRaw: String?
    package var endRaw: String?
    /// Epoch milliseconds.
    package var receivedAt: Int64
    /// SHA-256 of the decompressed document.
    package var contentHash: [UInt8]
    /// The document as received (gzip).
    package var raw: [UInt8]
    package var unparsedMeasurements: Int

    package init(
        id: Int64, app: String, kind: PayloadKind, appVersion: String?, build: String?, osVersion: String?,
        deviceType: String?, region: String?, architecture: String?, day: String, begin: Int64?, end: Int64?,
        beginRaw: String?, endRaw: String?, receivedAt: Int64, contentHash: [UInt8], raw: [UInt8],
        unparsedMeasurements: Int
    ) {
        self.id = id
        self.app = app
        self.kind = kind
        self.appVersion = appVersion
        self.build = build
        self.osVersion = osVersion
        self.deviceType = deviceType
        self.region = region
        self.architecture = architecture
        self.day = day
        self.begin = begin
        self.end = end
        self.beginRaw = beginRaw
        self.endRaw = endRaw
        self.receivedAt = receivedAt
        self.contentHash = contentHash
        self.raw = raw
        self.unparsedMeasurements = unparsedMeasurements
    }
}
