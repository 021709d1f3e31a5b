import CompressNIO
import Crypto
import LifelineModel
import NIOCore

/// How a body was encoded on the wire (`Content-Encoding`).
package enum BodyEncoding: Sendable, Equatable {
    case identity
    case gzip

    /// Parses a `Content-Encoding` header value; `nil` for an encoding Lifeline does not speak.
    package init?(header: String?) {
        guard let header else {
            self = .identity
            return
        }
        switch header.trimmingWhitespace().lowercased() {
        case "", "identity": self = .identity
        case "gzip", "x-gzip": self = .gzip
        default: return nil
        }
    }
}

/// Turns a request body into store items: bounded gunzip, decode, app check, content hash,
/// compressed raw copy. Shared by the HTTP ingest endpoints and `lifeline ingest`.
package struct IngestPipeline: Sendable {
    package var limits: IngestLimits
    package var decodeLimits: DecodeLimits

    package init(limits: IngestLimits = .init(), decodeLimits: DecodeLimits = .init()) {
        self.limits = limits
        self.decodeLimits = decodeLimits
    }

    /// Prepares the items of one body for the writer.
    /// - Parameters:
    ///   - body: the body as received.
    ///   - encoding: its `Content-Encoding`.
    ///   - family: which documents the endpoint accepts (`nil`: detect per document).
    ///   - app: the bundle id the caller may write to; a document naming another one is refused.
    ///   - receivedAt: reception time, epoch milliseconds.
    ///   - storedRaw: the raw copy of a stored document decoded again (``redecode(raw:kind:app:receivedAt:dictionary:)``):
    ///     its item keeps it as its raw copy instead of compressing the body again.
    package func prepare(
        body: ByteBuffer, encoding: BodyEncoding, family: DocumentFamily?, app: String, receivedAt: Int64,
        storedRaw: [UInt8]? = nil
    ) throws(IngestError) -> [IngestItem] {
        if body.readableBytes > limits.maxBodyBytes {
            throw IngestError(
                .tooLarge, code: "body_too_large",
                "body is \(body.readableBytes) bytes, over the limit of \(limits.maxBodyBytes)")
        }
        let json: ByteBuffer
        switch encoding {
        case .identity: json = body
        case .gzip: json = try inflate(body)
        }
        let documents: [DecodedDocument]
        do {
            documents = try json.withUnsafeReadableBytes { (raw) throws(DecodeError) in
                try MetricKitDecoder.decode(raw, family: family, limits: decodeLimits)
            }
        } catch {
            switch error.code {
            case .malformedJSON: throw IngestError(.badRequest, code: "malformed_json", error.message)
            case .notMetricKit: throw IngestError(.unprocessable, code: "not_metrickit", error.message)
            case .limitExceeded: throw IngestError(.tooLarge, code: "limit_exceeded", error.message)
            case .unsupportedVersion, .unreadableTimeRange:
                throw IngestError(.unprocessable, code: error.code.rawValue, error.message)
            }
        }
        // A single gzip document is kept exactly as received; otherwise each document is compressed on its own.
        let keepBodyAsRaw = encoding == .gzip && documents.count == 1
        var items: [IngestItem] = []
        items.reserveCapacity(documents.count)
        for (index, document) in documents.enumerated() {
            if let claimed = document.bundleIdentifier, claimed != app {
                let position = documents.count > 1 ? "document \(index): " : ""
                throw IngestError(
                    .forbidden, code: "forbidden",
                    "\(position)bundleIdentifier \"\(claimed)\" differs from the key's app \"\(app)\"")
            }
            guard
                let slice = json.getSlice(
                    at: json.readerIndex + document.byteRange.lowerBound, length: document.byteRange.count)
            else {
                throw IngestError(.internal, code: "internal", "a document's bytes could not be read back")
            }
            let hash = slice.withUnsafeReadableBytes { Array(SHA256.hash(data: $0)) }
            let raw: [UInt8]
            if let storedRaw, documents.count == 1 {
                raw = storedRaw
            } else if keepBodyAsRaw {
                raw = Array(buffer: body)
            } else {
                raw = try Self.gzip(slice)
            }
            items.append(IngestItem(app: app, document: document, contentHash: hash, raw: raw, receivedAt: receivedAt))
        }
        return items
    }

    /// A body the decoder could not read (``DecodeError/Code/unsupportedVersion``), ready to be
    /// kept raw: hashed like a document, compressed like a raw copy. Bounded like any body.
    package func unread(
        body: ByteBuffer, encoding: BodyEncoding, app: String, receivedAt: Int64, reason: String, detail: String
    ) throws(IngestError) -> UnreadDocument {
        let json: ByteBuffer
        switch encoding {
        case .identity: json = body
        case .gzip: json = try inflate(body)
        }
        let hash = json.withUnsafeReadableBytes { Array(SHA256.hash(data: $0)) }
        let raw = encoding == .gzip ? Array(buffer: body) : try Self.gzip(json)
        return UnreadDocument(
            app: app, contentHash: hash, raw: raw, receivedAt: receivedAt, reason: reason, detail: detail)
    }

    /// Inflates a gzip body, refusing it as soon as it passes its budget (bounded memory).
    package func inflate(_ body: ByteBuffer) throws(IngestError) -> ByteBuffer {
        let budget = limits.inflateBudget(compressedBytes: body.readableBytes)
        var input = body
        do {
            return try input.decompress(with: .gzip(), maxSize: budget)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw IngestError(
                .tooLarge, code: "decompressed_too_large",
                "gzip body inflates past \(budget) bytes (limits: \(limits.maxDecompressedBytes) bytes, "
                    + "ratio \(limits.maxCompressionRatio):1); refused while inflating")
        } catch {
            throw IngestError(.badRequest, code: "malformed_gzip", "body is not valid gzip: \(error)")
        }
    }

    /// Compresses one document for the raw copy (fastest level: the raw copy is for re-derivation, not archival).
    static func gzip(_ buffer: ByteBuffer) throws(IngestError) -> [UInt8] {
        var input = buffer
        do {
            let out = try input.compress(
                with: .gzip(configuration: .init(compressionLevel: .fastestCompression)))
            return Array(buffer: out)
        } catch {
            throw IngestError(.internal, code: "internal", "could not compress the raw copy")
        }
    }
}

extension String {
    package func trimmingWhitespace() -> Substring {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
