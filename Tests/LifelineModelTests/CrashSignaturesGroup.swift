import LifelineModel
import Testing

@Suite("Crash signatures group crashes across rebuilds")
struct CrashSignaturesGroup {
    static func frame(_ name: String?, _ address: UInt64, _ offset: UInt64, samples: Int64? = nil) -> Frame {
        Frame(
            binaryUUID: "UUID-\(name ?? "none")", binaryName: name, address: address,
            offsetIntoBinaryTextSegment: offset,
            sampleCount: samples)
    }

    static func perThreadTree(_ frames: [Frame]) -> CallStackTree {
        CallStackTree(
            callStackPerThread: true,
            callStacks: [
                CallStack(
                    threadAttributed: false, frames: [FlatFrame(depth: 0, frame: frame("Other", 4_300_000_000, 1))]),
                CallStack(
                    threadAttributed: true,
                    frames: frames.enumerated().map { FlatFrame(depth: $0.offset, frame: $0.element) }),
            ])
    }

    static let chain = [
        frame("libsystem_kernel.dylib", 8_034_627_788, 45_260),
        frame("MyApp", 4_329_804_520, 37_608),
        frame("UIKitCore", 6_653_249_476, 10_897_348),
        frame("MyApp", 4_329_800_400, 33_488),
        frame("MyFramework", 4_331_652_636, 1_885_724),
        frame("MyApp", 4_329_000_000, 500),
    ]

    @Test("the first three app frames, named with their text offsets, form the signature")
    func appFramesAreUsed() {
        let signature = CrashSignature.compute(
            kind: .crash, exceptionType: 1, signal: 11, terminationReason: "Namespace SIGNAL, Code 0xb",
            callStackTree: Self.perThreadTree(Self.chain))
        #expect(signature.groupKind == "crash")
        #expect(signature.frames.map(\.binaryName) == ["MyApp", "MyApp", "MyFramework"])
        #expect(signature.title == "EXC_BAD_ACCESS / SIGSEGV at MyApp +0x92e8")
        #expect(signature.fingerprint.count == 16)
        #expect(signature.fingerprint.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test("a rebuild that moves the load address but not the code keeps the fingerprint")
    func survivesASLR() {
        let slid = Self.chain.map { frame in
            Self.frame(frame.binaryName, frame.address + 0x4000, frame.offsetIntoBinaryTextSegment)
        }
        let a = CrashSignature.compute(
            kind: .crash, exceptionType: 1, signal: 11, terminationReason: nil,
            callStackTree: Self.perThreadTree(Self.chain))
        let b = CrashSignature.compute(
            kind: .crash, exceptionType: 1, signal: 11, terminationReason: nil, callStackTree: Self.perThreadTree(slid))
        #expect(a.fingerprint == b.fingerprint)
        let otherSignal = CrashSignature.compute(
            kind: .crash, exceptionType: 1, signal: 10, terminationReason: nil,
            callStackTree: Self.perThreadTree(Self.chain))
        #expect(otherSignal.fingerprint != a.fingerprint)
        #expect(otherSignal.title.hasPrefix("EXC_BAD_ACCESS / SIGBUS"))
    }

    @Test("the fingerprint is FNV-1a 64 of the components")
    func fingerprintIsFNV() {
        // Components: "hang", "", "" and no frames → "hang\u{1F}\u{1F}".
        let signature = CrashSignature.compute(
            kind: .hang, exceptionType: nil, signal: nil, terminationReason: nil, callStackTree: nil)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array("hang\u{1F}\u{1F}".utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        #expect(signature.fingerprint == String(repeating: "0", count: 16 - hex.count) + hex)
        #expect(signature.title == "Hang")
        #expect(signature.frames.isEmpty)
    }

    @Test("only system frames: the top frames are used instead")
    func systemFallback() {
        let chain = [
            Self.frame("libsystem_kernel.dylib", 8_034_627_788, 45_260),
            Self.frame("libsystem_c.dylib", 6_738_950_632, 248_296),
            Self.frame("CoreFoundation", 6_596_040_964, 825_604),
            Self.frame("UIKitCore", 6_653_249_476, 10_897_348),
        ]
        let signature = CrashSignature.compute(
            kind: .crash, exceptionType: 10, signal: 6, terminationReason: nil, callStackTree: Self.perThreadTree(chain)
        )
        #expect(
            signature.frames.map(\.binaryName) == ["libsystem_kernel.dylib", "libsystem_c.dylib", "CoreFoundation"])
        #expect(signature.title == "EXC_CRASH / SIGABRT at libsystem_kernel.dylib +0xb0cc")
    }

    @Test("a 0x8badf00d termination is its own watchdog group", arguments: ["0x8badf00d", "0x8BADF00D"])
    func watchdog(_ code: String) {
        let reason = "Namespace FRONTBOARD, Code \(code)\nscene-update watchdog transgression"
        let signature = CrashSignature.compute(
            kind: .crash, exceptionType: 10, signal: 9, terminationReason: reason,
            callStackTree: Self.perThreadTree(Self.chain))
        #expect(signature.groupKind == "watchdog")
        #expect(signature.title.hasPrefix("Watchdog termination (0x8badf00d) at MyApp"))
        let plain = CrashSignature.compute(
            kind: .crash, exceptionType: 10, signal: 9, terminationReason: nil,
            callStackTree: Self.perThreadTree(Self.chain))
        #expect(plain.fingerprint != signature.fingerprint)
    }

    @Test("the iOS 14.0.x real report groups on its app frames with corrected offsets")
    func realReportSignature() throws {
        let payload = try Fixtures.diagnostics("diagnostics/ChimeHQ_Meter__real_report.json")
        let first = payload.diagnostics[0].signature
        #expect(first.title == "EXC_BREAKPOINT / SIGTRAP at MetricKitTest +0xa050")
        #expect(first.frames.map(\.textOffset) == [41_040, 34_168])
        let second = payload.diagnostics[1].signature
        #expect(second.title == "EXC_BAD_ACCESS / SIGSEGV at MetricKitTest +0x6030")
        #expect(first.fingerprint != second.fingerprint)
    }

    @Test("flame graphs follow the heaviest chain")
    func flameGraphChain() throws {
        let tree = try MetricKitDecoder.decodeCallStackTree(
            try Fixtures.bytes("callstacktrees/getsentry_sentry-cocoa__not-per-thread.json"))
        let signature = CrashSignature.compute(
            kind: .cpuException, exceptionType: nil, signal: nil, terminationReason: nil, callStackTree: tree)
        // Sentry (7 samples) → iOS-Swift 46380 (6) → iOS-Swift 46360 (3) → iOS-Swift 46330 (1).
        #expect(signature.frames.map(\.offsetIntoBinaryTextSegment) == [414_732, 46_380, 46_360])
        #expect(signature.title == "CPU exception at Sentry +0x6540c")
    }

    @Test("iOS 14.0.x load addresses are turned into offsets, true offsets are kept")
    func textOffsets() {
        #expect(Self.frame("A", 6_859_816_880, 6_859_616_256).textOffset == 200_624)
        #expect(Self.frame("A", 4_312_798_220, 414_732).textOffset == 414_732)
        #expect(Self.frame("A", 74_565, 123).textOffset == 123)
        #expect(Self.frame("A", 100, 4_294_967_296).textOffset == 4_294_967_296)  // larger than the address: kept
    }

    @Test("system binaries are recognized by name or shared-cache address")
    func systemFrames() {
        #expect(Self.frame("libswiftCore.dylib", 4_300_000_000, 1).isSystemFrame)
        #expect(Self.frame("UIKitCore", 4_300_000_000, 1).isSystemFrame)
        #expect(Self.frame("SomePrivateFramework", 7_000_000_000, 1).isSystemFrame)
        #expect(!Self.frame("MyApp", 4_300_000_000, 1).isSystemFrame)
        #expect(!Self.frame("Splash.debug.dylib", 4_329_804_520, 1).isSystemFrame)
        #expect(!Self.frame(nil, 74_565, 123).isSystemFrame)
    }

    @Test("exception types and signals have their Darwin names")
    func names() {
        let types = (1...13).map { exceptionTypeName(Int64($0)) ?? "?" }
        #expect(
            types == [
                "EXC_BAD_ACCESS", "EXC_BAD_INSTRUCTION", "EXC_ARITHMETIC", "EXC_EMULATION", "EXC_SOFTWARE",
                "EXC_BREAKPOINT", "EXC_SYSCALL", "EXC_MACH_SYSCALL", "EXC_RPC_ALERT", "EXC_CRASH", "EXC_RESOURCE",
                "EXC_GUARD", "EXC_CORPSE_NOTIFY",
            ])
        #expect(exceptionTypeName(0) == nil)
        #expect(exceptionTypeName(99) == nil)
        #expect(signalName(1) == "SIGHUP")
        #expect(signalName(4) == "SIGILL")
        #expect(signalName(5) == "SIGTRAP")
        #expect(signalName(6) == "SIGABRT")
        #expect(signalName(8) == "SIGFPE")
        #expect(signalName(9) == "SIGKILL")
        #expect(signalName(10) == "SIGBUS")
        #expect(signalName(11) == "SIGSEGV")
        #expect(signalName(13) == "SIGPIPE")
        #expect(signalName(15) == "SIGTERM")
        #expect(signalName(31) == "SIGUSR2")
        #expect(signalName(0) == nil)
        #expect(signalName(32) == nil)
    }
}
