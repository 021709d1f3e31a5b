// libFuzzer entry point over the MetricKit decoder (both document families, auto-detected family,
// standalone call-stack trees), plain or gzip. Built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer,address` together with Sources/LifelineModel/*.swift in ONE module
// (`-module-name LifelineModel`), so the decoder's `package` API is reachable; it is not part of
// the SwiftPM build.
import CZlib

/// Largest inflated body the fuzzer decodes; bigger gzip output is refused, as the server refuses it.
let inflateLimit = 8 << 20

/// The first input byte selects the path; the rest is the body.
///
/// - `selector & 3`: 0 family auto-detected (`nil`), 1 `.metric`, 2 `.diagnostic`,
///   3 `MetricKitDecoder.decodeCallStackTree`;
/// - a body starting with the gzip magic `1f 8b` is inflated with zlib first (output capped at
///   8 MiB), then decoded; an invalid or oversized stream is rejected without decoding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0] & 3
    let body = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    if body.count >= 2 && body[0] == 0x1f && body[1] == 0x8b {
        guard let inflated = inflateGzip(body, limit: inflateLimit) else { return 0 }
        inflated.withUnsafeBytes { decode($0, selector: selector) }
    } else {
        // Decoded in place: ASan reports any read past libFuzzer's exactly sized buffer.
        decode(body, selector: selector)
    }
    return 0
}

/// Runs one decoder path over `body`; `DecodeError`s are expected and ignored.
func decode(_ body: UnsafeRawBufferPointer, selector: UInt8) {
    let limits = DecodeLimits()
    if selector == 3 {
        guard let tree = try? MetricKitDecoder.decodeCallStackTree(Array(body), limits: limits) else { return }
        consume(tree.callStacks.reduce(0) { $0 + $1.frames.count })
        consume(CrashSignature.signatureChain(tree).count)
        return
    }
    let family: DocumentFamily? = selector == 1 ? .metric : selector == 2 ? .diagnostic : nil
    guard let documents = try? MetricKitDecoder.decode(body, family: family, limits: limits) else { return }
    for document in documents {
        switch document.content {
        case .metric(let metric):
            consume(metric.scalars.count + metric.histograms.count + metric.exits.count + metric.signposts.count)
        case .diagnostic(let payload):
            for diagnostic in payload.diagnostics {
                consume(diagnostic.signature.fingerprint.utf8.count)
                consume(diagnostic.callStackTree?.attributedChain.count ?? 0)
            }
        }
        consume(document.droppedValues + document.unparsedMeasurements)
    }
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func consume(_ value: Int) {
    sink &+= value
}

nonisolated(unsafe) var sink = 0

/// Inflates a gzip stream (zlib, `16 + MAX_WBITS`), refusing output past `limit`; `nil` when the
/// stream is invalid, truncated or too large.
func inflateGzip(_ input: UnsafeRawBufferPointer, limit: Int) -> [UInt8]? {
    var stream = z_stream()
    guard inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, CInt(MemoryLayout<z_stream>.size)) == Z_OK else {
        return nil
    }
    defer { inflateEnd(&stream) }
    // zlib never writes through next_in; the cast only satisfies its non-const C signature.
    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.avail_in = uInt(input.count)
    var output = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let status = chunk.withUnsafeMutableBufferPointer { outBuffer -> CInt in
            stream.next_out = outBuffer.baseAddress
            stream.avail_out = uInt(outBuffer.count)
            return inflate(&stream, Z_NO_FLUSH)
        }
        let produced = chunk.count - Int(stream.avail_out)
        if output.count + produced > limit { return nil }
        output.append(contentsOf: chunk[0..<produced])
        if status == Z_STREAM_END { return output }
        if status != Z_OK { return nil }
        if produced == 0 && stream.avail_in == 0 { return nil }
    }
}
