import Foundation
import Testing

@testable import LifelineKit

@Suite("The hash, gzip and Retry-After primitives")
struct PrimitiveTests {
    @Test("the portable SHA-256 gives the FIPS 180-2 test vectors")
    func sha256MatchesFIPSVectors() {
        let vectors: [(Data, String)] = [
            (Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (
                Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                Data(repeating: UInt8(ascii: "a"), count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
        ]
        for (input, expected) in vectors {
            let digest = PortableSHA256.digest(input).map { String(format: "%02x", $0) }.joined()
            #expect(digest == expected)
            #expect(ContentHash.hex(input) == expected)
        }
    }

    @Test("gzip output inflates back to the input with the system's gzip")
    func gzipRoundTrips() throws {
        let input = Data((0..<5_000).map { "line \($0) of a report\n" }.joined().utf8)
        let compressed = try Gzip.compress(input)
        #expect(compressed.prefix(2) == Data([0x1f, 0x8b]))
        #expect(compressed.count < input.count / 4)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = URL(fileURLWithPath: directory.path("report.json.gz"))
        try compressed.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "gzip -dc '\(file.path)'"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let inflated = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(inflated == input)
    }

    @Test("Retry-After is read as seconds or as an HTTP date, never negative")
    func retryAfterParses() throws {
        #expect(Transport.retryAfter("7") == .seconds(7))
        #expect(Transport.retryAfter("-3") == .seconds(0))
        #expect(Transport.retryAfter(nil) == nil)
        #expect(Transport.retryAfter("soon") == nil)
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-01T10:00:00Z"))
        #expect(Transport.retryAfter("Sun, 01 Nov 2026 10:00:30 GMT", now: now) == .seconds(30))
        #expect(Transport.retryAfter("Sun, 01 Nov 2026 09:00:00 GMT", now: now) == .seconds(0))
    }
}
