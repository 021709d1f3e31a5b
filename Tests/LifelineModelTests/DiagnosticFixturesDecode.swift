import LifelineModel
import Testing

@Suite("Diagnostic fixtures decode to their values")
struct DiagnosticFixturesDecode {
    @Test("a real iOS 14.0.1 report yields two crashes with deep attributed threads")
    func realReport() throws {
        let payload = try Fixtures.diagnostics("diagnostics/ChimeHQ_Meter__real_report.json")
        #expect(payload.begin?.epochSeconds == 1_602_302_400)
        #expect(payload.diagnostics.count == 2)
        let first = payload.diagnostics[0]
        #expect(first.kind == .crash)
        #expect(first.version == "1.0.0")
        #expect(first.exceptionType == 6)
        #expect(first.exceptionCode == 1)
        #expect(first.signal == 5)
        #expect(first.terminationReason == "Namespace SIGNAL, Code 0x5")
        #expect(first.meta.appVersion == "1.0")
        #expect(first.meta.osVersion == "iPhone OS 14.0.1 (18A393)")
        let tree = try #require(first.callStackTree)
        #expect(tree.callStackPerThread)
        #expect(tree.callStacks.count == 10)
        #expect(tree.callStacks.filter { $0.threadAttributed == true }.count == 1)
        let attributed = tree.callStacks[0].frames
        #expect(attributed.count == 32)
        #expect(attributed.map(\.depth) == Array(0..<32))
        #expect(attributed[0].frame.address == 6_859_816_880)
        #expect(attributed[0].frame.binaryName == "libswiftCore.dylib")
        #expect(attributed[0].frame.offsetIntoBinaryTextSegment == 6_859_616_256)
        #expect(attributed[0].frame.textOffset == 200_624)  // iOS 14.0.x: the field holds the load address
        #expect(attributed[31].frame.binaryName == "libdyld.dylib")

        let second = payload.diagnostics[1]
        #expect(second.exceptionType == 1)
        #expect(second.signal == 11)
        #expect(second.virtualMemoryRegionInfo?.contains("PRT/MAX") == true)  // `\/` unescaped
        #expect(second.virtualMemoryRegionInfo?.contains("\n") == true)
    }

    @Test("the simulated iOS 14 payload has one diagnostic of four kinds")
    func simulatedIOS14() throws {
        let payload = try Fixtures.diagnostics("diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json")
        #expect(payload.begin == Timestamp(epochSeconds: 1_602_358_524, raw: "2020-10-10 19:35:24 +0000"))
        #expect(payload.diagnostics.map(\.kind) == [.crash, .hang, .cpuException, .diskWriteException])
        let crash = payload.diagnostics[0]
        #expect(crash.exceptionType == 1)
        #expect(crash.signal == 11)
        #expect(crash.exceptionCode == 0)
        #expect(crash.callStackTree?.callStacks.first?.frames.first?.frame.address == 74_565)
        #expect(crash.callStackTree?.callStacks.first?.frames.first?.frame.textOffset == 123)

        let hang = payload.diagnostics[1]
        #expect(hang.primaryMeasurement == Measurement(value: 20_000, unit: .milliseconds, raw: "20 secs."))
        let cpu = payload.diagnostics[2]
        #expect(cpu.primaryMeasurement?.value == 20_000)
        #expect(cpu.totalSampledTime?.value == 20_000)
        #expect(cpu.callStackTree?.callStackPerThread == false)
        #expect(cpu.callStackTree?.callStacks.first?.threadAttributed == nil)
        let disk = payload.diagnostics[3]
        #expect(disk.primaryMeasurement == Measurement(value: 2000, unit: .bytes, raw: "2,000 byte"))
    }

    @Test("the simulated macOS 13 payload has zoneless timestamps, empty versions and a launch")
    func simulatedMacOS13() throws {
        let payload = try Fixtures.diagnostics("diagnostics/ChimeHQ_Meter__xcode_simulated_macos13.json")
        #expect(payload.begin == Timestamp(epochSeconds: 1_664_362_770, raw: "2022-09-28 10:59:30"))
        #expect(payload.end?.epochSeconds == 1_664_362_770)
        #expect(payload.diagnostics.map(\.kind) == [.crash, .hang, .cpuException, .diskWriteException, .appLaunch])
        for diagnostic in payload.diagnostics {
            #expect(diagnostic.meta.appVersion == nil)
            #expect(diagnostic.meta.appBuildVersion == nil)
            #expect(diagnostic.meta.bundleIdentifier == "com.chimehq.Edit")
            #expect(diagnostic.meta.osVersion == "macOS 13.0 (22A5358e)")
        }
        #expect(payload.diagnostics[1].primaryMeasurement?.value == 20_000)  // "20 sec"
        #expect(payload.diagnostics[3].primaryMeasurement?.value == 2000)  // "2000 byte"
        #expect(
            payload.diagnostics[4].primaryMeasurement
                == Measurement(value: 20_000, unit: .milliseconds, raw: "20000 ms"))
    }

    @Test("a bare iOS 26 crash diagnostic becomes a payload without timestamps")
    func bareCrashDiagnostic() throws {
        let documents = try Fixtures.decode("diagnostics/embrace-io_embrace-apple-sdk__ios26-crash_diagnostic_01.json")
        #expect(documents.count == 1)
        #expect(documents[0].bundleIdentifier == "com.bedroomcode.Splash")
        guard case .diagnostic(let payload) = documents[0].content else {
            Issue.record("expected a diagnostic payload")
            return
        }
        #expect(payload.begin == nil)
        #expect(payload.end == nil)
        let crash = try #require(payload.diagnostics.first)
        #expect(crash.kind == .crash)
        #expect(crash.exceptionType == 10)
        #expect(crash.signal == 6)
        #expect(crash.meta.pid == 15_713)
        #expect(crash.meta.isTestFlightApp == false)
        #expect(crash.meta.lowPowerModeEnabled == false)
        #expect(crash.meta.appVersion == "1.0.0")
        let tree = try #require(crash.callStackTree)
        #expect(tree.callStacks.count == 13)
        #expect(tree.callStacks.filter { $0.frames.isEmpty }.count == 2)  // threads with empty frame arrays
        let top = try #require(tree.callStacks[0].frames.first?.frame)
        #expect(top.address == 8_034_627_788)
        #expect(top.binaryName == "libsystem_kernel.dylib")
        #expect(tree.callStacks[0].frames.count == 64)
        #expect(crash.signature.title == "EXC_CRASH / SIGABRT at Splash.debug.dylib +0x92e8")
        #expect(crash.signature.frames.map(\.textOffset) == [37_608, 33_488, 4_766_368])
    }
}
