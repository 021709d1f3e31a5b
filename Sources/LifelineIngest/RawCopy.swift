import CLifelineZlib

/// The formats a stored raw copy comes in, and the preset-dictionary deflate that shrinks it at
/// rest (``RawCopy/deflate(_:dictionary:)``).
///
/// A raw copy is stored as the client sent it (gzip), or gzip-compressed per document. MetricKit's
/// JSON repeats the same keys in every document, which a 32 KB preset dictionary taken from an
/// app's own documents lets deflate refer to: such a copy is a standard zlib stream whose header
/// names its dictionary by Adler-32 (`FDICT`, RFC 1950), so it reads back with any zlib given the
/// dictionary (`zlib.decompressobj(zdict=…)` in Python). The store keeps the dictionaries beside
/// the copies and never changes one once a copy refers to it.
package enum RawCopy {
    /// A preset dictionary's size at most: deflate refers back 32 KB at most.
    package static let dictionarySize = 32_768

    /// A copy that does not read back: corrupt, truncated, past its bound, or deflated against a
    /// dictionary that is not there.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// Whether `blob` is a gzip stream.
    package static func isGzip(_ blob: [UInt8]) -> Bool {
        blob.count >= 2 && blob[0] == 0x1F && blob[1] == 0x8B
    }

    /// Whether `blob` is plain JSON: its first byte past white space opens an object or an array.
    package static func isPlainJSON(_ blob: [UInt8]) -> Bool {
        let first = blob.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// The Adler-32 of the preset dictionary `blob` was deflated against (a zlib stream whose
    /// header sets `FDICT`); `nil` for a gzip copy or plain JSON (neither starts like a zlib
    /// header: gzip with 0x1F, JSON with `{`, `[` or white space).
    package static func dictionaryID(_ blob: [UInt8]) -> UInt32? {
        guard blob.count >= 6, blob[0] & 0x0F == 8, blob[0] >> 4 <= 7,
            (Int(blob[0]) << 8 | Int(blob[1])) % 31 == 0, blob[1] & 0x20 != 0
        else { return nil }
        return UInt32(blob[2]) << 24 | UInt32(blob[3]) << 16 | UInt32(blob[4]) << 8 | UInt32(blob[5])
    }

    /// The Adler-32 checksum of `bytes` (a dictionary's id in a zlib header).
    package static func adler32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CLifelineZlib.adler32(1, $0.baseAddress, uInt($0.count))) }
    }

    /// A preset dictionary made of `documents` (oldest first): their last ``dictionarySize`` bytes
    /// end to end. Deflate refers to the nearest strings most cheaply, so the newest go last.
    package static func dictionary(trainedOn documents: [[UInt8]]) -> [UInt8] {
        var tail: [[UInt8]] = []
        var size = 0
        for document in documents.reversed() where size < dictionarySize {
            tail.append(document)
            size += document.count
        }
        return Array(tail.reversed().joined().suffix(dictionarySize))
    }

    /// `json` deflated at `level` into a zlib stream against `dictionary`. Level 7 by default: on
    /// reference payloads 7 % smaller than level 6 in the same time; 8 takes twice as long for 10 %
    /// less (BENCHMARKS.md, "Raw copies compacted at rest"). `Z_FILTERED`: matches shorter than
    /// six bytes left as literals, which a document of numbers codes better: iOS 27 reports 3 %
    /// smaller in the same time, legacy payloads the same (BENCHMARKS.md, "Raw copies deflated
    /// filtered").
    package static func deflate(_ json: [UInt8], dictionary: [UInt8], level: Int32 = 7) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let started = deflateInit2_(
            &stream, level, Z_DEFLATED, 15, 8, Z_FILTERED, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw Failure("zlib could not start deflating (\(started))") }
        defer { deflateEnd(&stream) }
        let primed = dictionary.withUnsafeBufferPointer {
            deflateSetDictionary(&stream, $0.baseAddress, uInt($0.count))
        }
        guard primed == Z_OK else { throw Failure("zlib refused the dictionary (\(primed))") }
        // The bound covers the header and its dictionary id; a little more for the trailer.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(json.count))) + 16)
        let status = json.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return CLifelineZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure("zlib could not finish deflating (\(status))") }
        // A copy of its own size: the buffer was sized for the input.
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// The document a raw copy holds: a gzip stream or a zlib stream inflated (a dictionary copy
    /// with `dictionary(id)`), anything else as it is (plain JSON). Refused past `maxBytes`.
    package static func json(
        of blob: [UInt8], maxBytes: Int, dictionary: (UInt32) -> [UInt8]?
    ) throws(Failure) -> [UInt8] {
        let zlib = blob.count >= 2 && blob[0] & 0x0F == 8 && (Int(blob[0]) << 8 | Int(blob[1])) % 31 == 0
        guard isGzip(blob) || zlib else {
            guard blob.count <= maxBytes else { throw Failure("is \(blob.count) bytes, past \(maxBytes)") }
            return blob
        }
        return try inflate(blob, maxBytes: maxBytes, dictionary: dictionary)
    }

    private enum Step {
        case more, done, needsDictionary(UInt32), failed(Int32)
    }

    /// Inflates a gzip or zlib stream (window bits 15 + 32: either header), asking `dictionary`
    /// for a preset dictionary when the stream names one.
    private static func inflate(
        _ blob: [UInt8], maxBytes: Int, dictionary: (UInt32) -> [UInt8]?
    ) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let started = inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw Failure("zlib could not start inflating (\(started))") }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: max(1, min(maxBytes, max(16_384, blob.count * 8))))
        var produced = 0
        var input = blob
        var failure: Failure?
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            while failure == nil {
                if produced == output.count {
                    guard output.count < maxBytes else {
                        failure = Failure("inflates past \(maxBytes) bytes")
                        return
                    }
                    output.append(contentsOf: repeatElement(0, count: min(output.count, maxBytes - output.count)))
                }
                let step: Step = output.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress.map { $0 + produced }
                    stream.avail_out = uInt(out.count - produced)
                    let status = CLifelineZlib.inflate(&stream, Z_NO_FLUSH)
                    produced = out.count - Int(stream.avail_out)
                    switch status {
                    case Z_STREAM_END: return .done
                    case Z_OK: return .more
                    case Z_NEED_DICT: return .needsDictionary(UInt32(truncatingIfNeeded: stream.adler))
                    case Z_BUF_ERROR where stream.avail_in > 0: return .more
                    default: return .failed(status)
                    }
                }
                switch step {
                case .more: continue
                case .done: return
                case .needsDictionary(let id):
                    guard let bytes = dictionary(id) else {
                        failure = Failure("deflated against dictionary \(id), which is not stored")
                        return
                    }
                    let set = bytes.withUnsafeBufferPointer {
                        inflateSetDictionary(&stream, $0.baseAddress, uInt($0.count))
                    }
                    if set != Z_OK { failure = Failure("dictionary \(id) does not match the copy (\(set))") }
                case .failed(let status):
                    failure = Failure(status == Z_BUF_ERROR ? "truncated" : "corrupt (zlib \(status))")
                }
            }
        }
        if let failure { throw failure }
        // A buffer much larger than the document is not kept alive with it.
        if output.count > produced + produced / 2 { return Array(output.prefix(produced)) }
        output.removeSubrange(produced...)
        return output
    }
}
