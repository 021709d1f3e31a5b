import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineServer
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import NIOCore
import Testing

/// Zips of dSYMs checked from their central directory before anything is inflated, and inflated
/// within bounds of bytes and CPU time (issue 24). The zips are made by Info-ZIP's `zip` tool
/// (zip64 with `-fz`, links with `-y`), then damaged byte by byte where a test says so.
@Suite("Zip uploads of dSYMs")
struct SymbolArchiveTests {
    static let dwarfPath = "A.dSYM/Contents/Resources/DWARF/A"

    @Test("50 MB of random bytes behind a zip signature are refused from the file's last 64 KiB, nothing inflated")
    func randomBytesBehindASignature() throws {
        let directory = TemporaryDirectory()
        let junk = try Self.junkZip(in: directory.url, megabytes: 50)
        #expect(SymbolFiles.isZip(junk))
        let out = directory.url.appendingPathComponent("out")
        let error = try #require(Self.refusal { try SymbolFiles.extractArchive(junk, into: out) })
        #expect(error.code == .invalidZip)
        #expect(error.message.contains("no end-of-central-directory record in the file's last 65557 bytes"))
        // Refused before the output folder is made: nothing was inflated.
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("a readable zip (plain and zip64) is read from its tail and directory only, and extracted whole")
    func readableZips() throws {
        let directory = TemporaryDirectory()
        let bytes = Self.randomBytes(3_000)
        for arguments in [[], ["-fz"]] {
            let zip = try Self.makeZip(
                in: directory.url, [(Self.dwarfPath, bytes), ("A.dSYM/Info.plist", Data())], arguments)
            let read = try ZipDirectory.read(zip, limits: SymbolArchiveLimits())
            #expect(read.isZip64 == (arguments == ["-fz"]))
            #expect(read.dwarfEntries.map(\.path) == [Self.dwarfPath])
            #expect(read.dwarfEntries.first?.uncompressedSize == 3_000)
            // The tail (the whole file here: under 64 KiB) and the directory, nothing more.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: zip.path)[.size] as? Int)
            #expect(read.bytesRead == size + Int(read.directorySize) + (read.isZip64 ? 76 : 0))
            let files = try SymbolFiles.extractArchive(zip, into: directory.url.appendingPathComponent("out"))
            #expect(files.map(\.binaryName) == ["A"])
            #expect(try Data(contentsOf: try #require(files.first?.file)) == bytes)
        }
    }

    @Test("sizes declared in the central directory are refused before inflating: zip bombs, zip64 bombs, totals")
    func declaredSizes() throws {
        let directory = TemporaryDirectory()
        let out = directory.url.appendingPathComponent("out")
        let bytes = Self.hexBytes(3_000)
        // A deflated entry that says 3.75 GiB from ~1.5 KB.
        var plain = try Data(contentsOf: try Self.makeZip(in: directory.url, [(Self.dwarfPath, bytes)]))
        let header = try #require(Self.centralHeader(plain, Self.dwarfPath))
        Self.put32(&plain, header + 24, 0xF000_0000)
        let bomb = directory.url.appendingPathComponent("bomb.zip")
        try plain.write(to: bomb)
        let bombed = try #require(Self.refusal { try SymbolFiles.extractArchive(bomb, into: out) })
        #expect(bombed.code == .zipBomb, "\(bombed)")
        #expect(bombed.message.contains("refused as a zip bomb"))
        // A zip64 entry that says 1 TiB, in its zip64 extra field.
        var wide = try Data(contentsOf: try Self.makeZip(in: directory.url, [(Self.dwarfPath, bytes)], ["-fz"]))
        let wideHeader = try #require(Self.centralHeader(wide, Self.dwarfPath))
        let field = try #require(Self.zip64Field(wide, header: wideHeader))
        Self.put64(&wide, field, 1 << 40)
        let wideBomb = directory.url.appendingPathComponent("bomb64.zip")
        try wide.write(to: wideBomb)
        #expect(Self.refusal { try SymbolFiles.extractArchive(wideBomb, into: out) }?.code == .zipBomb)
        // Within any ratio, still over the total.
        let lax = SymbolArchiveLimits(maxRatio: 1 << 40)
        let total = try #require(Self.refusal { try SymbolFiles.extractArchive(wideBomb, into: out, limits: lax) })
        #expect(total.code == .tooLarge && total.status == 413, "\(total)")
        let small = try Self.makeZip(in: directory.url, [(Self.dwarfPath, bytes)])
        let capped = SymbolArchiveLimits(maxExtractedBytes: 2_000)
        #expect(Self.refusal { try SymbolFiles.extractArchive(small, into: out, limits: capped) }?.code == .tooLarge)
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("a central directory that does not fit the file is refused: cut short, shifted, bytes appended, file cut")
    func damagedDirectories() throws {
        let directory = TemporaryDirectory()
        let out = directory.url.appendingPathComponent("out")
        let original = try Data(
            contentsOf: try Self.makeZip(
                in: directory.url, [(Self.dwarfPath, Self.randomBytes(3_000)), ("A.dSYM/Info.plist", Data())]))
        let end = try #require(Self.lastIndex(of: [0x50, 0x4B, 0x05, 0x06], in: original))
        func refused(_ bytes: Data) throws -> SymbolArchiveError? {
            let file = directory.url.appendingPathComponent("damaged-\(UUID().uuidString).zip")
            try bytes.write(to: file)
            return Self.refusal { try SymbolFiles.extractArchive(file, into: out) }
        }
        // The last 20 bytes of the central directory cut out, the end record kept.
        var truncated = original
        truncated.removeSubrange((end - 20)..<end)
        let cut = try #require(try refused(truncated))
        #expect(cut.code == .invalidZip)
        #expect(cut.message.contains("does not end where the end record starts"), "\(cut)")
        // The directory's offset moved by one.
        var shifted = original
        Self.put32(&shifted, end + 16, Self.get32(original, end + 16) + 1)
        #expect(try refused(shifted)?.message.contains("does not end where") == true)
        // Bytes after the end record that its comment length does not account for.
        let appended = try #require(try refused(original + Data("junk".utf8)))
        #expect(appended.message.contains("announces a comment of 0 bytes"), "\(appended)")
        // The file cut in the middle: no end record left.
        #expect(try refused(original.prefix(original.count / 2))?.code == .invalidZip)
        // Entry count the directory cannot hold.
        var counted = original
        Self.put16(&counted, end + 8, 200)
        Self.put16(&counted, end + 10, 200)
        #expect(try refused(counted)?.message.contains("too short for the 200 entries") == true)
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("too many entries, links and absolute names are refused from the central directory")
    func entriesAndNames() throws {
        let directory = TemporaryDirectory()
        let out = directory.url.appendingPathComponent("out")
        let many = try Self.makeZip(
            in: directory.url, (0..<5).map { ("A.dSYM/Contents/Resources/file\($0)", Data("\($0)".utf8)) })
        let limits = SymbolArchiveLimits(maxEntries: 3)
        let crowded = try #require(Self.refusal { try SymbolFiles.extractArchive(many, into: out, limits: limits) })
        #expect(crowded.code == .tooManyEntries && crowded.message.contains("declares 5 entries"), "\(crowded)")
        // A symbolic link stored as a link (`zip -y`).
        let source = directory.url.appendingPathComponent("linked")
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent("A.dSYM/Contents/Resources/DWARF"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: source.appendingPathComponent(Self.dwarfPath).path, withDestinationPath: "/etc/passwd")
        let linked = directory.url.appendingPathComponent("linked.zip")
        try Self.run(["zip", "-q", "-X", "-y", "-r", linked.path, "A.dSYM"], in: source)
        let link = try #require(Self.refusal { try SymbolFiles.extractArchive(linked, into: out) })
        #expect(link.code == .unsafeEntry && link.message.contains("symbolic link"), "\(link)")
        // An absolute name (the first byte of the name, in both headers, made a slash).
        var absolute = try Data(contentsOf: try Self.makeZip(in: directory.url, [(Self.dwarfPath, Data("x".utf8))]))
        let header = try #require(Self.centralHeader(absolute, Self.dwarfPath))
        absolute[header + 46] = UInt8(ascii: "/")
        absolute[30] = UInt8(ascii: "/")
        let rooted = directory.url.appendingPathComponent("rooted.zip")
        try absolute.write(to: rooted)
        let named = try #require(Self.refusal { try SymbolFiles.extractArchive(rooted, into: out) })
        #expect(named.code == .unsafeEntry && named.message.contains("absolute path"), "\(named)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("inflating past the upload's CPU budget is refused and leaves no file behind")
    func cpuBudget() throws {
        let directory = TemporaryDirectory()
        let zip = try Self.makeZip(in: directory.url, [(Self.dwarfPath, Self.randomBytes(1 << 20))])
        let out = directory.url.appendingPathComponent("out")
        let limits = SymbolArchiveLimits(maxCPUSeconds: 1e-9)
        let spent = try #require(Self.refusal { try SymbolFiles.extractArchive(zip, into: out, limits: limits) })
        #expect(spent.code == .overBudget && spent.status == 422, "\(spent)")
        #expect(spent.message.contains("of CPU"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    @Test("uploads are refused with JSON naming the problem: invalid_zip 422, zip_bomb 422, zip_too_large 413")
    func uploadsAnswerTheirCode() async throws {
        let env = try TemporaryDatabase()
        let directory = env.directory.url
        let junk = try Self.junkZip(in: directory, megabytes: 50)
        var plain = try Data(contentsOf: try Self.makeZip(in: directory, [(Self.dwarfPath, Self.hexBytes(3_000))]))
        let small = directory.appendingPathComponent("small.zip")
        try plain.write(to: small)
        let header = try #require(Self.centralHeader(plain, Self.dwarfPath))
        Self.put32(&plain, header + 24, 0xF000_0000)
        let bomb = directory.appendingPathComponent("bomb.zip")
        try plain.write(to: bomb)
        let token = try env.token(.symbols, app: SymbolicationTests.app)
        var options = Database.Options()
        options.symbolArchive.maxExtractedBytes = 2_000
        try await TemporaryDatabase.withLiveServer(env.config(options: options)) { client async throws in
            let port = try #require(client.port)
            func post(_ file: URL) async throws -> PatientResponse {
                try await requestPatiently(
                    port: port, uri: "/v1/apps/\(SymbolicationTests.app)/dsyms",
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/zip"],
                    body: ByteBuffer(bytes: try Data(contentsOf: file)))
            }
            let refused = try await post(junk)
            #expect(refused.status == .unprocessableContent)
            #expect(errorCode(refused.body) == "invalid_zip", "\(String(buffer: refused.body))")
            #expect(String(buffer: refused.body).contains("no end-of-central-directory record"))
            let bombed = try await post(bomb)
            #expect(bombed.status == .unprocessableContent)
            #expect(errorCode(bombed.body) == "zip_bomb", "\(String(buffer: bombed.body))")
            let large = try await post(small)
            #expect(large.status == .contentTooLarge)
            #expect(errorCode(large.body) == "zip_too_large", "\(String(buffer: large.body))")
        }
        // No upload or inflated file is left.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: env.database.symbolDirectory.path)) ?? []
        #expect(left.isEmpty, "\(left)")
    }
}

extension SymbolArchiveTests {
    /// The archive error `body` throws, or nil (recorded) when it throws none or another error.
    static func refusal<T>(_ body: () throws -> T) -> SymbolArchiveError? {
        do {
            _ = try body()
            Issue.record("the archive was not refused")
        } catch let error as SymbolArchiveError {
            return error
        } catch {
            Issue.record("refused with another error: \(error)")
        }
        return nil
    }

    /// `count` bytes of hexadecimal digits of random bytes: deflate packs them about 2:1, as DWARF.
    static func hexBytes(_ count: Int) -> Data {
        Data(randomBytes(count / 2).map { String(format: "%02x", $0) }.joined().utf8)
    }

    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// `PK\3\4` and `megabytes` MB of /dev/urandom, with no end-record signature in its last 64 KiB.
    static func junkZip(in directory: URL, megabytes: Int) throws -> URL {
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? random.close() }
        var bytes = Data([0x50, 0x4B, 0x03, 0x04])
        bytes.append(try #require(try random.read(upToCount: megabytes << 20)))
        for index in (bytes.count - 65_557)..<(bytes.count - 3) where bytes[index] == 0x50 && bytes[index + 1] == 0x4B {
            bytes[index] = 0
        }
        let file = directory.appendingPathComponent("junk-\(megabytes)MB.zip")
        try bytes.write(to: file)
        return file
    }

    /// A zip made by the `zip` tool of `entries` (path → bytes), with extra `arguments`.
    static func makeZip(in directory: URL, _ entries: [(String, Data)], _ arguments: [String] = []) throws -> URL {
        let source = directory.appendingPathComponent("source-\(UUID().uuidString)")
        for (path, bytes) in entries {
            let file = source.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try bytes.write(to: file)
        }
        let zip = directory.appendingPathComponent("\(UUID().uuidString).zip")
        try run(["zip", "-q", "-X", "-D"] + arguments + [zip.path] + entries.map(\.0), in: source)
        return zip
    }

    static func run(_ arguments: [String], in directory: URL) throws {
        #expect(try Lifeline.tool(arguments, in: directory) == 0, "\(arguments.joined(separator: " "))")
    }

    /// Where the central directory header of `path` starts.
    static func centralHeader(_ bytes: Data, _ path: String) -> Int? {
        let name = Array(path.utf8)
        var at = 0
        while let found = index(of: [0x50, 0x4B, 0x01, 0x02], in: bytes, from: at) {
            let length = Int(get16(bytes, found + 28))
            if found + 46 + length <= bytes.count, Array(bytes[(found + 46)..<(found + 46 + length)]) == name {
                return found
            }
            at = found + 1
        }
        return nil
    }

    /// Where the 64-bit uncompressed size of the zip64 extra field of the header at `header` is.
    static func zip64Field(_ bytes: Data, header: Int) -> Int? {
        var extra = header + 46 + Int(get16(bytes, header + 28))
        let end = extra + Int(get16(bytes, header + 30))
        while extra + 4 <= end {
            if get16(bytes, extra) == 1 { return extra + 4 }
            extra += 4 + Int(get16(bytes, extra + 2))
        }
        return nil
    }

    static func index(of pattern: [UInt8], in bytes: Data, from start: Int = 0) -> Int? {
        guard bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        return (start...(bytes.count - pattern.count)).first { at in
            pattern.indices.allSatisfy { bytes[at + $0] == pattern[$0] }
        }
    }

    static func lastIndex(of pattern: [UInt8], in bytes: Data) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).reversed().first { at in
            pattern.indices.allSatisfy { bytes[at + $0] == pattern[$0] }
        }
    }

    static func get16(_ bytes: Data, _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }

    static func get32(_ bytes: Data, _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    static func put16(_ bytes: inout Data, _ at: Int, _ value: UInt16) {
        for index in 0..<2 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt16(index))) }
    }

    static func put32(_ bytes: inout Data, _ at: Int, _ value: UInt32) {
        for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
    }

    static func put64(_ bytes: inout Data, _ at: Int, _ value: UInt64) {
        for index in 0..<8 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }
}
