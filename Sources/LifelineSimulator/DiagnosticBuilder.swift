import LifelineModel
/// What happened on one device-day that MetricKit reports as diagnostics.
struct DiagnosticEvents: Sendable {
    var crashes: [SimulatedCrash] = []
    var hangs = 0
    var cpuExceptions = 0
    var diskWriteExceptions = 0
    var appLaunches = 0

    var isEmpty: Bool { crashes.isEmpty && hangs + cpuExceptions + diskWriteExceptions + appLaunches == 0 }
}

/// Everything a diagnostic payload of one device-day needs to know about its device.
struct DiagnosticContext {
    var device: Device
    var version: String
    var build: String
    var bundleIdentifier: String
    var images: Images
    var pid: Int64
    var lowPower: Bool
}

/// Writes `MXDiagnosticPayload` JSON.
enum DiagnosticBuilder {
    /// The payload of one device-day's diagnostics.
    static func payload(
        events: DiagnosticEvents, context c: DiagnosticContext, begin: String, end: String, rng: inout SplitMix64
    ) -> [UInt8] {
        var w = JSONWriter(capacity: 32_768)
        w.object { w in
            w.string("timeStampBegin", begin)
            w.string("timeStampEnd", end)
            if !events.crashes.isEmpty {
                w.array("crashDiagnostics") { w in
                    for crash in events.crashes { self.crash(&w, crash, c, &rng) }
                }
            }
            if events.hangs > 0 {
                w.array("hangDiagnostics") { w in
                    for _ in 0..<events.hangs { hang(&w, c, &rng) }
                }
            }
            if events.cpuExceptions > 0 {
                w.array("cpuExceptionDiagnostics") { w in
                    for _ in 0..<events.cpuExceptions { cpuException(&w, c, &rng) }
                }
            }
            if events.diskWriteExceptions > 0 {
                w.array("diskWriteExceptionDiagnostics") { w in
                    for _ in 0..<events.diskWriteExceptions { diskWrite(&w, c, &rng) }
                }
            }
            if events.appLaunches > 0 {
                w.array("appLaunchDiagnostics") { w in
                    for _ in 0..<events.appLaunches { appLaunch(&w, c, &rng) }
                }
            }
        }
        return w.bytes
    }

    private static func metaData(
        _ w: inout JSONWriter, _ c: DiagnosticContext, extra: (inout JSONWriter) -> Void
    ) {
        w.object("diagnosticMetaData") { w in
            w.string("appVersion", c.version)
            w.string("appBuildVersion", c.build)
            w.string("osVersion", c.device.os.display)
            w.string("deviceType", c.device.deviceType)
            w.string("regionFormat", c.device.locale.regionFormat)
            w.string("platformArchitecture", "arm64e")
            if c.device.os.major >= 17 {
                w.string("bundleIdentifier", c.bundleIdentifier)
                w.bool("lowPowerModeEnabled", c.lowPower)
            }
            w.int("pid", c.pid)
            w.bool("isTestFlightApp", c.device.isTestFlight)
            extra(&w)
        }
    }

    /// Places the attributed thread among bystanders (usually first: the main thread).
    private static func threads(
        attributed: [(BinaryImage, UInt64)], _ c: DiagnosticContext, _ rng: inout SplitMix64, mainThread: Bool
    ) -> [SimThread] {
        var threads = c.images.bystanders(&rng)
        let position = mainThread ? 0 : rng.int(in: 1...threads.count)
        threads.insert(SimThread(attributed: true, frames: attributed), at: position)
        return threads
    }

    private static func crash(
        _ w: inout JSONWriter, _ crash: SimulatedCrash, _ c: DiagnosticContext, _ rng: inout SplitMix64
    ) {
        let i = c.images
        let app = i.app
        var frames: [(BinaryImage, UInt64)]
        var mainThread = true
        switch crash {
        case .feedCellBadAccess:
            frames = [
                (app, AppFunction.feedCellConfigure), (app, AppFunction.feedCellForRow),
                (i.uikit, 0x1B_7C40), (i.uikit, 0x1B_6F10), (app, AppFunction.feedDataSourceApply),
            ]
            frames += i.mainThreadBase(&rng)
        case .imageCacheBadAccess:
            frames = [
                (i.sys("ImageIO"), 0x4_1C30), (app, AppFunction.imageCacheDecode), (app, AppFunction.thumbnailLoad),
                (app, AppFunction.feedCellConfigure), (app, AppFunction.feedCellForRow), (i.uikit, 0x1B_7C40),
            ]
            frames += i.mainThreadBase(&rng)
        case .syncBadAccess:
            mainThread = false
            frames = [
                (i.swiftCore, 0x3A_E2C8), (app, AppFunction.syncMerge), (app, AppFunction.syncRun),
                (app, AppFunction.syncSchedulerFire),
            ]
            frames += i.dispatchBase
        case .uncaughtException:
            frames = [
                (i.kernel, 0x8_B40), (i.pthread, 0x7_2E4), (i.libc, 0x7_5A04), (i.cxxabi, 0x1_03C4),
                (i.cxxabi, 0x1_C3F4), (i.objc, 0x3_4F58), (i.cxxabi, 0x1_1A4C), (i.cxxabi, 0x1_19E8),
                (i.objc, 0x3_2C18), (i.cf, 0x1_5A6A0), (app, AppFunction.exportExport),
                (app, AppFunction.exportButtonTapped), (i.uikit, 0x12_A2F0),
            ]
            frames += i.mainThreadBase(&rng)
        case .swiftTrap:
            frames = [
                (app, AppFunction.profileLoad), (app, AppFunction.profileViewWillAppear), (i.uikit, 0x9_D218),
                (i.uikit, 0x9_C6A4),
            ]
            frames += i.mainThreadBase(&rng)
        case .stackOverflow:
            frames = []
            for _ in 0..<rng.int(in: 90...140) { frames.append((app, AppFunction.jsonNodeRender)) }
            frames += [(app, AppFunction.documentLayout), (i.uikit, 0x2_0C5C0), (i.uikit, 0x2_0BF1C)]
            frames += i.mainThreadBase(&rng)
        case .launchWatchdog:
            frames = [
                (i.kernel, 0x1_CB4), (i.dispatch, 0x3_B2C8), (i.dispatch, 0x3_B8EC), (app, AppFunction.migrateDatabase),
                (app, AppFunction.didFinishLaunching), (i.uikit, 0x2E_1B40), (i.uikit, 0x2E_0A18),
            ]
            frames += i.mainThreadBase(&rng)
        case .suspendWatchdog:
            frames = [
                (i.kernel, 0x2_4F0), (i.sqlite, 0x5_91B0), (i.sqlite, 0x2_0E14), (app, AppFunction.databaseQuery),
                (app, AppFunction.syncRun),
            ]
            frames += i.mainThreadBase(&rng)
        }
        let threads = threads(attributed: frames, c, &rng, mainThread: mainThread)
        w.object { w in
            w.string("version", "1.0.0")
            CallStackTreeWriter.perThread(&w, threads: threads)
            metaData(&w, c) { w in
                let codes = crash.codes
                w.int("exceptionType", codes.type)
                w.int("exceptionCode", codes.code)
                w.int("signal", codes.signal)
                switch crash {
                case .launchWatchdog, .suspendWatchdog:
                    w.string("terminationReason", watchdogReason(crash, c, &rng))
                case .uncaughtException:
                    w.string(
                        "terminationReason",
                        "Namespace SIGNAL, Code 6 Abort trap: 6\nTerminating Process: \(c.bundleIdentifier) [\(c.pid)]")
                    w.object("exceptionReason") { w in
                        let index = rng.int(in: 4...12)
                        let upper = index - rng.int(in: 1...3)
                        w.string(
                            "composedMessage",
                            "*** -[__NSArrayM objectAtIndexedSubscript:]: index \(index) beyond bounds [0 .. \(upper)]")
                        w.string(
                            "formatString",
                            "*** -[__NSArrayM objectAtIndexedSubscript:]: index %lu beyond bounds [0 .. %lu]")
                        w.array("arguments") { w in
                            w.string(nil, String(index))
                            w.string(nil, String(upper))
                        }
                        w.string("exceptionType", "Objective-C")
                        w.string("className", "NSException")
                        w.string("exceptionName", "NSRangeException")
                    }
                case .feedCellBadAccess, .syncBadAccess, .imageCacheBadAccess, .stackOverflow:
                    let address = rng.int(in: 0...0xFF) * 8
                    w.string(
                        "virtualMemoryRegionInfo",
                        "0x\(String(address, radix: 16)) is not in any region.  Bytes before following region: 4294967296\n"
                            + "      REGION TYPE                 START - END      [ VSIZE] PRT/MAX SHRMOD  REGION DETAIL\n"
                            + "      UNUSED SPACE AT START\n--->  \n"
                            + "      __TEXT                   100000000-100b4c000 [ 11.3M] r-x/r-x SM=COW  \(c.images.app.name)"
                    )
                case .swiftTrap:
                    break
                }
            }
        }
    }

    private static func watchdogReason(_ crash: SimulatedCrash, _ c: DiagnosticContext, _ rng: inout SplitMix64)
        -> String
    {
        let elapsed = rng.int(in: 10_100...19_900)
        let cpu = rng.int(in: 20...95)
        let event = crash == .launchWatchdog ? "scene-create" : "process-exit"
        let visibility = crash == .launchWatchdog ? "Foreground" : "Background"
        return """
            Namespace FRONTBOARD, Code 0x8badf00d
            \(event) watchdog transgression: application<\(c.bundleIdentifier)>:\(c.pid) exhausted real (wall clock) \
            time allowance of 10.00 seconds
            ProcessVisibility: \(visibility)
            ProcessState: Running
            WatchdogEvent: \(event)
            WatchdogVisibility: \(visibility)
            WatchdogCPUStatistics: (
            "Elapsed total CPU time (seconds): \(elapsed / 1000).\(elapsed % 1000 / 100) (user \(elapsed / 2000).0, system 0.9), \(cpu)% CPU",
            "Elapsed application CPU time (seconds): \(elapsed / 3000).\(elapsed % 10), \(cpu / 2)% CPU"
            ) reportType:CrashLog maxTerminationResistance:Interactive
            """
    }

    private static func hang(_ w: inout JSONWriter, _ c: DiagnosticContext, _ rng: inout SplitMix64) {
        let i = c.images
        var frames: [(BinaryImage, UInt64)] = [
            (i.kernel, 0x7_D84), (i.sqlite, 0x5_91B0), (i.sqlite, 0x5_3A1C), (i.sqlite, 0x2_0E14),
            (i.sqlite, 0x1_F7C8), (i.app, AppFunction.databaseQuery), (i.app, AppFunction.timelineReload),
        ]
        frames += i.mainThreadBase(&rng)
        let threads = threads(attributed: frames, c, &rng, mainThread: true)
        let seconds = Int64(rng.int(in: 1...14))
        w.object { w in
            w.string("version", "1.0.0")
            CallStackTreeWriter.perThread(&w, threads: threads)
            metaData(&w, c) { w in
                w.string("hangDuration", c.device.locale.measurement(seconds, .seconds))
            }
        }
    }

    private static func appLaunch(_ w: inout JSONWriter, _ c: DiagnosticContext, _ rng: inout SplitMix64) {
        let i = c.images
        var frames: [(BinaryImage, UInt64)] = [
            (i.kernel, 0x1_CB4), (i.dispatch, 0x3_B2C8), (i.app, AppFunction.migrateDatabase),
            (i.app, AppFunction.didFinishLaunching), (i.uikit, 0x2E_1B40), (i.uikit, 0x2E_0A18),
        ]
        frames += i.mainThreadBase(&rng)
        let threads = threads(attributed: frames, c, &rng, mainThread: true)
        let milliseconds = Int64(rng.int(in: 2_100...9_800))
        w.object { w in
            w.string("version", "1.0.0")
            CallStackTreeWriter.perThread(&w, threads: threads)
            metaData(&w, c) { w in
                w.string("launchDuration", c.device.locale.measurement(milliseconds, .milliseconds))
            }
        }
    }

    /// A sampled flame graph: `total` samples split over a few roots and their callees.
    private static func flameGraph(
        total: Int, leaves: [(BinaryImage, UInt64)], callers: [(BinaryImage, UInt64)], _ rng: inout SplitMix64
    ) -> [SimFrame] {
        var remaining = total
        var roots: [SimFrame] = []
        for (index, leaf) in leaves.enumerated() {
            let samples = index == leaves.count - 1 ? remaining : max(1, remaining * rng.int(in: 30...70) / 100)
            remaining -= samples
            guard samples > 0 else { break }
            var node = SimFrame(leaf.0, leaf.1, samples: samples)
            var left = samples
            var children: [SimFrame] = []
            for (k, caller) in callers.enumerated() where left > 0 {
                let share = k == callers.count - 1 ? left : max(1, left * rng.int(in: 40...90) / 100)
                left -= share
                var chain = SimFrame(caller.0, caller.1, samples: share)
                chain.children = [SimFrame(callers[0].0, callers[0].1 &+ 0x40, samples: share)]
                children.append(chain)
            }
            node.children = children
            roots.append(node)
        }
        return roots
    }

    private static func cpuException(_ w: inout JSONWriter, _ c: DiagnosticContext, _ rng: inout SplitMix64) {
        let i = c.images
        let sampled = Int64(rng.int(in: 150...180))
        let cpu = Int64(rng.int(in: 90...150))
        let roots = flameGraph(
            total: Int(cpu) * 10,
            leaves: [
                (i.app, AppFunction.compressorDeflate), (i.sys("libz.1.dylib"), 0x3_5C0), (i.swiftCore, 0x1F_2A10),
            ],
            callers: [(i.app, AppFunction.analyticsFlush), (i.dispatch, 0x3_FDC), (i.pthread, 0x1_AB8)], &rng)
        w.object { w in
            w.string("version", "1.0.0")
            CallStackTreeWriter.flameGraph(&w, roots: roots)
            metaData(&w, c) { w in
                w.string("totalCPUTime", c.device.locale.measurement(cpu, .seconds))
                w.string("totalSampledTime", c.device.locale.measurement(sampled, .seconds))
            }
        }
    }

    private static func diskWrite(_ w: inout JSONWriter, _ c: DiagnosticContext, _ rng: inout SplitMix64) {
        let i = c.images
        let written = Int64(1_073_741_824 + rng.int(in: 0...400_000_000))
        let roots = flameGraph(
            total: rng.int(in: 40...400),
            leaves: [(i.kernel, 0x9_0F8), (i.sqlite, 0x6_2E40)],
            callers: [(i.app, AppFunction.diskCacheWrite), (i.app, AppFunction.thumbnailLoad), (i.dispatch, 0x3_FDC)],
            &rng)
        w.object { w in
            w.string("version", "1.0.0")
            CallStackTreeWriter.flameGraph(&w, roots: roots)
            metaData(&w, c) { w in
                w.string("writesCaused", c.device.locale.measurement(written, .bytes))
            }
        }
    }
}
