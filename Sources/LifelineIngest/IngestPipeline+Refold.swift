import LifelineModel
import NIOCore

extension IngestPipeline {
    /// Decoding raw copies again (the aggregator of either store, a refold): the limits they were
    /// accepted under, with room, so a document is never refused by the fold for a limit lowered
    /// since it was stored.
    package static let refold: IngestPipeline = {
        var limits = IngestLimits()
        limits.maxBodyBytes = 1 << 30
        limits.maxDecompressedBytes = 1 << 30
        limits.maxCompressionRatio = 1 << 20
        var decode = DecodeLimits()
        decode.maxFramesPerTree = 10_000_000
        decode.maxFramesPerBody = 10_000_000
        decode.maxStringBytes = 64 << 20
        decode.maxMetricsPerDocument = 1 << 20
        decode.maxMetricsPerBody = 1 << 20
        decode.maxExitEntriesPerDocument = 1 << 20
        decode.maxSignpostsPerDocument = 1 << 20
        decode.maxBucketsPerHistogram = 1 << 20
        return IngestPipeline(limits: limits, decodeLimits: decode)
    }()

    /// The item a stored raw copy (`raw`: gzip, plain, or deflated against a preset dictionary
    /// that `dictionary` returns by id, one document; ``RawCopy``) was when ingest accepted it; the
    /// reason as text when it cannot be read again. The item's raw copy is `raw`, as stored.
    package static func redecode(
        raw: [UInt8], kind: String, app: String, receivedAt: Int64,
        dictionary: (UInt32) -> [UInt8]? = { _ in nil }
    ) -> Result<IngestItem, RedecodeError> {
        let family: DocumentFamily = kind == "diagnostic" ? .diagnostic : .metric
        let items: [IngestItem]
        do {
            var body = raw
            var encoding: BodyEncoding = RawCopy.isGzip(raw) ? .gzip : .identity
            if RawCopy.dictionaryID(raw) != nil {
                body = try RawCopy.json(of: raw, maxBytes: refold.limits.maxDecompressedBytes, dictionary: dictionary)
                encoding = .identity
            }
            items = try refold.prepare(
                body: ByteBuffer(bytes: body), encoding: encoding, family: family, app: app, receivedAt: receivedAt,
                storedRaw: raw)
        } catch {
            return .failure(RedecodeError(reason: "\(error)"))
        }
        guard items.count == 1, let item = items.first else {
            return .failure(RedecodeError(reason: "its raw copy holds \(items.count) documents"))
        }
        return .success(item)
    }
}

/// Why a stored raw copy could not be decoded again.
package struct RedecodeError: Error, Sendable, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}
