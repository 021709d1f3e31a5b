// libFuzzer entry point over the MetricKit decoder (both document families, bare diagnostics,
// standalone call-stack trees), plain or gzip. Built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer,address` together with Sources/LifelineModel in one module; it is not
// part of the SwiftPM build.
import CZlib

/// The first input byte selects the path; the rest is the body.
///
/// - bit 0-1: family nil / .metric / .diagnostic / standalone call-stack tree
/// - a body starting with the gzip magic is inflated first (output capped at 8 MiB, as the server
///   caps its own inflate budget), then decoded.
@_cdecl("LLVMFuzzerTestOneInput")
public func lifelineFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    var body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if body.count >= 2 && body[0] == 0x1f && body[1] == 0x8b {
        guard let inflated = inflateGzip(body, limit: 8 << 20) else { return 0 }
        body = inflated
    }
    switch selector & 3 {
    case 3:
        if let tree = try? MetricKitDecoder.decodeCallStackTree(body) {
            consume(tree.callStacks.reduce(0) { $0 + $1.frames.count })
            consume(CrashSignature.signatureChain(tree).count)
        }
    default:
        let family: DocumentFamily? = selector & 3 == 1 ? .metric : selector & 3 == 2 ? .diagnostic : nil
        if let documents = try? MetricKitDecoder.decode(body, family: family) {
            for document in documents {
                switch document.content {
                case .metric(let metric):
                    consume(metric.scalars.count + metric.histograms.count + metric.exits.count)
                    consume(metric.signposts.count)
                case .diagnostic(let payload):
                    for diagnostic in payload.diagnostics {
                        consume(diagnostic.signature.fingerprint.utf8.count)
                        consume(diagnostic.callStackTree?.attributedChain.count ?? 0)
                    }
                }
                consume(document.droppedValues + document.unparsedMeasurements)
            }
        }
    }
    return 0
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func consume(_ value: Int) {
    sink &+= value
}

nonisolated(unsafe) var sink = 0

/// Inflates a gzip stream with zlib, refusing output past `limit`; `nil` when invalid or too large.
func inflateGzip(_ input: [UInt8], limit: Int) -> [UInt8]? {
    var stream = z_stream()
    guard inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, CInt(MemoryLayout<z_stream>.size)) == Z_OK else {
        return nil
    }
    defer { inflateEnd(&stream) }
    var output = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    var input = input
    return input.withUnsafeMutableBufferPointer { inBuffer -> [UInt8]? in
        stream.next_in = inBuffer.baseAddress
        stream.avail_in = uInt(inBuffer.count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { outBuffer -> CInt in
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return inflate(&stream, Z_NO_FLUSH)
            }
            let produced = chunk.count - Int(stream.avail_out)
            output.append(contentsOf: chunk[0..<produced])
            if output.count > limit { return nil }
            if status == Z_STREAM_END { return output }
            if status != Z_OK { return nil }
            if produced == 0 && stream.avail_in == 0 { return nil }
        }
    }
}
