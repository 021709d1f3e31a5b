import CLifelineKitZlib
import Foundation

/// Gzip through zlib (`deflateInit2`, window bits 31: a gzip header and trailer, no file name, time 0).
enum Gzip {
    /// zlib refused to initialise or to compress (only on allocation failure).
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "zlib error \(code)" }
    }

    /// `data` gzip-compressed at the default level.
    static func compress(_ data: Data) throws(Failure) -> Data {
        var stream = z_stream()
        let initialised = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard initialised == Z_OK else { throw Failure(code: initialised) }
        defer { deflateEnd(&stream) }

        let bound = Int(deflateBound(&stream, uLong(data.count))) + 32
        var output = [UInt8](repeating: 0, count: bound)
        var input = [UInt8](data)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(code: status) }
        return Data(output.prefix(Int(stream.total_out)))
    }
}
