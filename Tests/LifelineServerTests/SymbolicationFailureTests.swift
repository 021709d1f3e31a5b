import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineAnalysis
import LifelineServer
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import NIOCore
import Testing

/// Symbol files that crash or hang `llvm-symbolizer` (issue 24): real crashing DWARF files made by
/// flipping one bit of the demo dSYM's `__debug_info` header (its abbreviation offset), each given
/// its own UUID; checked against the real llvm-symbolizer before use.
@Suite("Symbol files that fail")
struct SymbolicationFailureTests {
    @Test(
        "a symbol file that crashes llvm-symbolizer is marked unusable once, shown and counted; later queries skip it",
        arguments: Backend.allCases)
    func crashingFilesAreMarkedOnce(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        guard let dsym = try await SymbolicationTests.buildDemo(in: env.directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let broken = try Self.crashingVariants(of: dwarf, count: 3, in: env.directory.url)
        let good = try #require(try Data(contentsOf: dwarf).withUnsafeBytes { try MachOSlices.read($0) }.first?.uuid)
        let (ingest, read, admin) = (
            try await env.token(.ingest, app: SymbolicationTests.app), try await env.token(.read),
            try await env.token(.admin)
        )
        let app = SymbolicationTests.app
        try await env.withLiveServer { client async throws in
            func get(_ uri: String) async throws -> [String: Any] {
                let response = try await client.execute(
                    uri: uri, method: .get, headers: [.authorization: "Bearer \(read)"])
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                return try json(response.body)
            }
            func upload(_ file: URL, _ name: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/v1/apps/\(app)/dsyms?name=\(name)", method: .post,
                    headers: [.authorization: "Bearer \(admin)", .contentType: "application/octet-stream"],
                    body: ByteBuffer(bytes: try Data(contentsOf: file))
                ).status
            }
            #expect(try await upload(dwarf, "Demo") == .created)
            for (index, variant) in broken.enumerated() {
                #expect(try await upload(variant.file, "Broken\(index)") == .created)
            }
            let frames = [(good, "Demo")] + broken.enumerated().map { ($0.element.uuid, "Broken\($0.offset)") }
            let posted = try await client.execute(
                uri: "/v1/diagnostics", method: .post, headers: ingestHeaders(ingest),
                body: ByteBuffer(string: Self.crashPayload(frames: frames)))
            #expect(posted.status == .accepted, "\(String(buffer: posted.body))")
            let counted = try await Self.unusableCount(client, read)
            func detail() async throws -> [[String: Any]] {
                let list = try await get("/v1/apps/\(app)/crashes?from=2026-11-01&to=2026-11-01")
                let id = try #require((list["groups"] as? [[String: Any]])?.first?["id"] as? Int)
                let body = try await get("/v1/apps/\(app)/crashes/\(id)?from=2026-11-01&to=2026-11-01")
                return try #require(body["sample_stack"] as? [[String: Any]])
            }
            // The good binary is named; the broken ones stay binary + offset.
            let first = try await detail()
            try #require(first.count == 4)
            #expect(first.first?["function"] as? String == "Demo.Parser.parse(Swift.String) -> Swift.Int")
            #expect(first.dropFirst().allSatisfy { $0["function"] is NSNull })
            #expect(try await Self.unusableCount(client, read) - counted >= 3)

            func slices() async throws -> [String: [String: Any]] {
                let list = try #require(try await get("/v1/apps/\(app)/dsyms")["slices"] as? [[String: Any]])
                return Dictionary(uniqueKeysWithValues: list.compactMap { s in (s["uuid"] as? String).map { ($0, s) } })
            }
            let marked = try await slices()
            #expect(marked[good]?["unusable"] is NSNull)
            let marks = broken.map { (marked[$0.uuid]?["unusable"] as? [String: Any]) }
            #expect(marks.allSatisfy { $0?["reason"] as? String == "crashed" }, "\(marked)")
            let missing = try #require(
                try await get("/v1/apps/\(app)/dsyms?missing=true")["missing"] as? [[String: Any]])
            #expect(Set(missing.compactMap { $0["uuid"] as? String }) == Set(broken.map(\.uuid)))
            #expect(missing.allSatisfy { ($0["unusable"] as? [String: Any])?["reason"] as? String == "crashed" })

            // Later queries skip them: same answer, the marks not written again (which proves the
            // files are skipped; their speed is measured in BENCHMARKS.md, not timed here: under
            // the whole suite five queries once took 10.1 s on two shared cores).
            for _ in 0..<5 { #expect(try await detail().first?["line"] as? Int == 4) }
            let again = try await slices()
            for variant in broken {
                #expect(
                    (again[variant.uuid]?["unusable"] as? [String: Any])?["at"] as? String
                        == (marked[variant.uuid]?["unusable"] as? [String: Any])?["at"] as? String)
            }

            // `dsym list` shows the marks.
            let path = env.url ?? env.directory.databasePath
            let listed = try await Lifeline.run(["dsym", "list", "--db", path, "--app", app])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout.components(separatedBy: "UNUSABLE (crashed since").count == 4, "\(listed.stdout)")

            // Uploading a UUID again replaces the file and clears its mark: the good bytes under a
            // broken variant's UUID are used.
            let repaired = env.directory.url.appendingPathComponent("repaired")
            var bytes = try Data(contentsOf: dwarf)
            try Self.setUUID(of: &bytes, to: broken[0].uuid)
            try bytes.write(to: repaired)
            #expect(try await upload(repaired, "Broken0") == .created)
            #expect(try await slices()[broken[0].uuid]?["unusable"] is NSNull)
            let fixed = try await detail()
            try #require(fixed.count == 4)
            #expect(fixed[1]["function"] as? String == "Demo.Parser.parse(Swift.String) -> Swift.Int")
            #expect(fixed.dropFirst(2).allSatisfy { $0["function"] is NSNull })
        }
        await env.remove()
    }

    @Test("a symbolizer that does not answer in time is killed and its file marked timed out, once per version")
    func hangingSymbolizerTimesOut() throws {
        let directory = TemporaryDirectory()
        let script = directory.url.appendingPathComponent("hanging-symbolizer")
        try "#!/bin/sh\nexec sleep 30\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let symbolicator = try #require(
            Symbolicator(executable: script.path, processes: 1, requestTimeout: .milliseconds(300)))
        let counted = Symbolicator.unusableFiles(.timedOut)
        let clock = ContinuousClock()
        var answer: Symbolicator.Answer?
        let elapsed = clock.measure { answer = symbolicator.symbolicate(file: "/x/Demo", version: 1, address: 0x4000) }
        #expect(answer == .failed(.timedOut, first: true))
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3), "\(elapsed)")
        #expect(Symbolicator.unusableFiles(.timedOut) - counted >= 1)
        let skipped = clock.measure { answer = symbolicator.symbolicate(file: "/x/Demo", version: 1, address: 0x4008) }
        #expect(answer == .failed(.timedOut, first: false))
        #expect(skipped < .milliseconds(100), "\(skipped)")
        // A new version of the file (uploaded again) is asked again.
        #expect(
            symbolicator.symbolicate(file: "/x/Demo", version: 2, address: 0x4000) == .failed(.timedOut, first: true))
    }

    @Test("symbols.symbolizer_timeout_seconds sets the symbolizer's time limit for report and dsym; 0 is refused")
    func configuredSymbolizerTimeout() async throws {
        let env = try TemporaryDatabase()
        guard let dsym = try await SymbolicationTests.buildDemo(in: env.directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let uuid = try #require(try Data(contentsOf: dwarf).withUnsafeBytes { try MachOSlices.read($0) }.first?.uuid)
        let script = env.directory.url.appendingPathComponent("hanging-symbolizer")
        try "#!/bin/sh\nexec sleep 60\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        // The options every store opens its symbolicator with.
        #expect(StorageOptions().symbolizerTimeout == .seconds(10))
        var options = StorageOptions(llvmSymbolizer: script.path)
        options.symbolizerTimeoutSeconds = 0.25
        #expect(options.makeSymbolicator()?.requestTimeout == .milliseconds(250))
        // Through the config file: `report` asks the hanging symbolizer, waits 0.5 s (not the default
        // 10 s), marks the slice timed out and still writes its report.
        let app = SymbolicationTests.app
        let payload = try env.write("crash.json", SymbolicationTests.crashPayload(uuid: uuid))
        #expect(try await Lifeline.run(["ingest", "--db", env.path, "--app", app, payload]).status == 0)
        let config = try env.write(
            "lifeline.yaml", "symbols:\n  llvm_symbolizer: \(script.path)\n  symbolizer_timeout_seconds: 0.5\n")
        let imported = try await Lifeline.run([
            "dsym", "import", "--db", env.path, "--config", config, "--app", app, dsym.path,
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        let start = ContinuousClock.now
        let report = try await Lifeline.run([
            "report", "--db", env.path, "--config", config, "--app", app, "--from", "2026-11-01", "--to", "2026-11-01",
            "--format", "json", "--out", "-",
        ])
        let elapsed = ContinuousClock.now - start
        #expect(report.status == 0, "\(report.stderr)")
        #expect(elapsed < .seconds(9), "the report took \(elapsed): the configured 0.5 s was not used")
        let listed = try await Lifeline.run(["dsym", "list", "--db", env.path, "--config", config, "--app", app])
        #expect(listed.stdout.contains("UNUSABLE (timed_out since"), "\(listed.stdout)")
        let bad = try env.write("bad.yaml", "symbols:\n  symbolizer_timeout_seconds: 0\n")
        let refused = try await Lifeline.run(["dsym", "list", "--db", env.path, "--config", bad, "--app", app])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("symbols.symbolizer_timeout_seconds must be more than 0 and at most 3600, got 0.0"),
            "\(refused.stderr)")
    }

    @Test("a crashed llvm-symbolizer process is replaced: the next file is symbolicated")
    func crashedProcessIsReplaced() async throws {
        let directory = TemporaryDirectory()
        guard let dsym = try await SymbolicationTests.buildDemo(in: directory.url) else { return }
        let dwarf = try #require(try SymbolFiles.dwarfFiles(at: dsym.path).first)
        let broken = try #require(try Self.crashingVariants(of: dwarf, count: 1, in: directory.url).first)
        let symbolicator = try #require(Symbolicator(processes: 1))
        #expect(
            symbolicator.symbolicate(file: broken.file.path, version: 1, address: 0x1_0000_4030)
                == .failed(.crashed, first: true))
        guard
            case .symbols(let symbols) = symbolicator.symbolicate(file: dwarf.path, version: 1, address: 0x1_0000_4030)
        else {
            Issue.record("the good file was not symbolicated")
            return
        }
        #expect(symbols.first?.line == 4)
    }
}

extension SymbolicationFailureTests {
    /// `count` copies of `dwarf`, each with one bit of its first compile unit's abbreviation offset
    /// flipped and its own UUID, that the real llvm-symbolizer dies on (checked here).
    static func crashingVariants(of dwarf: URL, count: Int, in directory: URL) throws -> [(file: URL, uuid: String)] {
        let original = try Data(contentsOf: dwarf)
        let info = try #require(Self.sectionOffset(original, "__debug_info"))
        var variants: [(file: URL, uuid: String)] = []
        for bit in 0..<24 where variants.count < count {
            var bytes = original
            bytes[info + 7 + bit / 8] ^= UInt8(1 << (bit % 8))  // bytes 7…9 of the CU header: debug_abbrev_offset
            let uuid = "BAD0B17F-0000-4000-8000-" + String(format: "%012X", bit)
            try Self.setUUID(of: &bytes, to: uuid)
            let file = directory.appendingPathComponent("Broken-\(bit)")
            try bytes.write(to: file)
            if try Self.crashesSymbolizer(file) { variants.append((file, uuid)) }
        }
        #expect(variants.count == count, "only \(variants.count) of the flipped variants crash llvm-symbolizer")
        return variants
    }

    /// Whether the real llvm-symbolizer, asked for an address of `file`, dies of a signal.
    static func crashesSymbolizer(_ file: URL) throws -> Bool {
        let symbolicator = try #require(Symbolicator())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: symbolicator.executable)
        process.arguments = ["--output-style=JSON", "--inlines", "--obj=\(file.path)", "0x100004030"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
    }

    /// The file offset of section `name` of a thin 64-bit Mach-O.
    static func sectionOffset(_ bytes: Data, _ name: String) -> Int? {
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        var cursor = 32
        for _ in 0..<u32(16) {
            if u32(cursor) == 0x19 {
                for index in 0..<u32(cursor + 64) {
                    let section = cursor + 72 + 80 * index
                    let raw = bytes[section..<(section + 16)].prefix { $0 != 0 }
                    if String(decoding: raw, as: UTF8.self) == name { return u32(section + 48) }
                }
            }
            cursor += u32(cursor + 4)
        }
        return nil
    }

    /// Rewrites the `LC_UUID` of a thin 64-bit Mach-O.
    static func setUUID(of bytes: inout Data, to uuid: String) throws {
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let hex = Array(uuid.replacingOccurrences(of: "-", with: ""))
        var cursor = 32
        for _ in 0..<u32(16) {
            if u32(cursor) == 0x1B {
                for index in 0..<16 {
                    bytes[cursor + 8 + index] = try #require(
                        UInt8(String(hex[(2 * index)..<(2 * index + 2)]), radix: 16))
                }
                return
            }
            cursor += u32(cursor + 4)
        }
        Issue.record("no LC_UUID")
    }

    /// `lifeline_symbol_files_unusable_total{reason="crashed"}` now.
    static func unusableCount(_ client: any TestClientProtocol, _ token: String) async throws -> Double {
        let samples = try await MetricsEndpointTests.scrape(client, token)
        return try #require(samples.value("lifeline_symbol_files_unusable_total", ["reason": "crashed"]))
    }

    /// A crash whose stack has one frame (offset 0x4030) of each binary, the first on top.
    static func crashPayload(frames: [(uuid: String, name: String)]) -> String {
        var tree = ""
        for (uuid, name) in frames.reversed() {
            let children = tree.isEmpty ? "" : ", \"subFrames\": [\(tree)]"
            tree = """
                {"binaryUUID": "\(uuid)", "binaryName": "\(name)", "offsetIntoBinaryTextSegment": 16432, \
                "address": 4295000112, "sampleCount": 1\(children)}
                """
        }
        return """
            {"timeStampBegin": "2026-11-01 10:00:00 +0000", "timeStampEnd": "2026-11-01 10:00:00 +0000",
             "crashDiagnostics": [{"version": "1.0.0",
              "diagnosticMetaData": {"appVersion": "1.0", "appBuildVersion": "1", "osVersion": "iPhone OS 17.4 (21E219)",
                "deviceType": "iPhone15,2", "regionFormat": "US", "platformArchitecture": "arm64",
                "bundleIdentifier": "\(SymbolicationTests.app)", "exceptionType": 1, "exceptionCode": 0, "signal": 11},
              "callStackTree": {"callStackPerThread": true, "callStacks": [{"threadAttributed": true,
                "callStackRootFrames": [\(tree)]}]}}]}
            """
    }
}
