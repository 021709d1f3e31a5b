import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineServer
import LifelineSQLite
import LifelineStorage
import LifelineTestFixtures
import LifelineTestSupport
import NIOCore
import Testing
import ZIPFoundation

/// The demo binary and dSYM the symbolication tests build (clang, ld64.lld-14, dsymutil), and a
/// crash of it.
extension SymbolicationTests {
    static let app = "com.example.demo"
    static let source = """
        int helper(int x) { return x * 3 + 1; }
        int parse(int x) __asm__("_$s4Demo6ParserV5parseySiSSF");
        int parse(int x) {
            int y = helper(x);
            return y + 2;
        }
        int main(void) { return parse(4); }
        void draw(void) __asm__("__ZN4Demo5Shape4drawEv");
        void draw(void) {}

        """

    /// Builds `Demo` and `Demo.dSYM` in `directory`; nil (after recording why under CI) without the
    /// tools. The compilers are waited for on a thread of their own (``offPool(_:)``).
    static func buildDemo(in directory: URL) async throws -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        func found(_ tool: String) -> Bool {
            path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
        let dsymutil = found("dsymutil-14") ? "dsymutil-14" : "dsymutil"
        let missing =
            ["clang", "ld64.lld-14", dsymutil].filter { !found($0) }
            + (Symbolicator() == nil ? ["llvm-symbolizer"] : [])
        guard missing.isEmpty else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("missing \(missing.joined(separator: ", ")): install lld-14 and llvm-14")
            } else {
                print("SymbolicationTests skipped: missing \(missing.joined(separator: ", "))")
            }
            return nil
        }
        try source.write(to: directory.appendingPathComponent("demo.c"), atomically: true, encoding: .utf8)
        for arguments in [
            ["clang", "-target", "arm64-apple-ios17.0", "-g", "-c", "demo.c", "-o", "demo.o"],
            [
                "ld64.lld-14", "-arch", "arm64", "-platform_version", "ios", "17.0", "17.0", "-e", "_main", "-o",
                "Demo", "demo.o",
            ],
            [dsymutil, "Demo", "-o", "Demo.dSYM"],
        ] {
            let status = try await offPool { try Lifeline.tool(arguments, in: directory) }
            guard status == 0 else {
                Issue.record("\(arguments.joined(separator: " ")) failed with \(status)")
                return nil
            }
        }
        return directory.appendingPathComponent("Demo.dSYM")
    }

    static func crashPayload(uuid: String) -> String {
        // The top frame at parse's `helper(x)` call (offset 0x4030), its caller's return address 0x4009.
        """
        {"timeStampBegin": "2026-11-01 10:00:00 +0000", "timeStampEnd": "2026-11-01 10:00:00 +0000",
         "crashDiagnostics": [{"version": "1.0.0",
          "diagnosticMetaData": {"appVersion": "1.0", "appBuildVersion": "1", "osVersion": "iPhone OS 17.4 (21E219)",
            "deviceType": "iPhone15,2", "regionFormat": "US", "platformArchitecture": "arm64",
            "bundleIdentifier": "\(app)", "exceptionType": 1, "exceptionCode": 0, "signal": 11},
          "callStackTree": {"callStackPerThread": true, "callStacks": [{"threadAttributed": true,
            "callStackRootFrames": [{"binaryUUID": "\(uuid)", "binaryName": "Demo", "offsetIntoBinaryTextSegment": 16432,
              "address": 4295000112, "sampleCount": 1,
              "subFrames": [{"binaryUUID": "\(uuid)", "binaryName": "Demo", "offsetIntoBinaryTextSegment": 16393,
                "address": 4295000073, "sampleCount": 1}]}]}]}}]}
        """
    }

    static func zip(_ url: URL, _ entries: [(String, Data)]) throws {
        let archive = try Archive(url: url, accessMode: .create)
        for (path, bytes) in entries {
            try archive.addEntry(
                with: path, type: .file, uncompressedSize: Int64(bytes.count), compressionMethod: .deflate
            ) { position, size in
                bytes.subdata(in: Int(position)..<(Int(position) + size))
            }
        }
    }
}
