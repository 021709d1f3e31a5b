import LifelineModel
/// A loaded binary image: its name, UUID and load address.
package struct BinaryImage: Sendable, Equatable {
    package var name: String
    package var uuid: String
    package var loadAddress: UInt64

    /// An Apple library of an OS build, mapped in the shared cache (≥ `0x1_8000_0000`).
    static func system(_ name: String, osBuild: String) -> BinaryImage {
        let slot = stableHash(name) % 0x4000
        return BinaryImage(
            name: name, uuid: uuidString(stableHash(osBuild, name)),
            loadAddress: 0x1_8000_0000 + slot * 0x10000)
    }

    /// The app's own binary of one app version, loaded at `0x1_0000_0000`.
    static func app(_ name: String, version: String, bundle: String) -> BinaryImage {
        BinaryImage(name: name, uuid: uuidString(stableHash(bundle, version)), loadAddress: 0x1_0000_0000)
    }

    /// A deterministic UUID string from a 64-bit hash.
    static func uuidString(_ hash: UInt64) -> String {
        var rng = SplitMix64(seed: hash)
        let a = rng.next()
        let b = rng.next()
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for (i, nibbleIndex) in (0..<32).enumerated() {
            let word = nibbleIndex < 16 ? a : b
            let shift = UInt64((15 - nibbleIndex % 16) * 4)
            out.append(hex[Int((word >> shift) & 0xF)])
            if i == 7 || i == 11 || i == 15 || i == 19 { out.append("-") }
        }
        return out
    }
}

/// One frame of a simulated call-stack tree.
package struct SimFrame: Sendable {
    var image: BinaryImage
    var offset: UInt64
    var sampleCount: Int
    var children: [SimFrame]

    init(_ image: BinaryImage, _ offset: UInt64, samples: Int = 1, children: [SimFrame] = []) {
        self.image = image
        self.offset = offset
        sampleCount = samples
        self.children = children
    }

    /// Writes this frame (and its sub-frames) as MetricKit JSON.
    func write(_ w: inout JSONWriter) {
        w.object { w in
            w.string("binaryUUID", image.uuid)
            w.uint("offsetIntoBinaryTextSegment", offset)
            w.int("sampleCount", Int64(sampleCount))
            w.string("binaryName", image.name)
            w.uint("address", image.loadAddress + offset)
            if !children.isEmpty {
                w.array("subFrames") { w in
                    for child in children { child.write(&w) }
                }
            }
        }
    }

    /// A single-child chain from a list of frames, top of stack first.
    static func chain(_ frames: [(BinaryImage, UInt64)]) -> SimFrame? {
        var node: SimFrame?
        for (image, offset) in frames.reversed() {
            node = SimFrame(image, offset, children: node.map { [$0] } ?? [])
        }
        return node
    }
}

/// One thread of a per-thread tree: its frames top-first, and whether it is the attributed one.
struct SimThread: Sendable {
    var attributed: Bool
    var frames: [(BinaryImage, UInt64)]
}

/// Writes a `callStackTree` object.
enum CallStackTreeWriter {
    /// Per-thread tree (crash, hang, app launch): exactly one thread attributed.
    static func perThread(_ w: inout JSONWriter, threads: [SimThread]) {
        w.object("callStackTree") { w in
            w.array("callStacks") { w in
                for thread in threads {
                    w.object { w in
                        w.bool("threadAttributed", thread.attributed)
                        w.array("callStackRootFrames") { w in
                            SimFrame.chain(thread.frames)?.write(&w)
                        }
                    }
                }
            }
            w.bool("callStackPerThread", true)
        }
    }

    /// Flame-graph tree (CPU, disk writes): several roots with sample counts.
    static func flameGraph(_ w: inout JSONWriter, roots: [SimFrame]) {
        w.object("callStackTree") { w in
            w.array("callStacks") { w in
                w.object { w in
                    w.array("callStackRootFrames") { w in
                        for root in roots { root.write(&w) }
                    }
                }
            }
            w.bool("callStackPerThread", false)
        }
    }
}

/// The binaries of one device-day: the app binary of its version and the OS's libraries.
struct Images: Sendable {
    let app: BinaryImage
    let osBuild: String

    func sys(_ name: String) -> BinaryImage { .system(name, osBuild: osBuild) }

    var kernel: BinaryImage { sys("libsystem_kernel.dylib") }
    var pthread: BinaryImage { sys("libsystem_pthread.dylib") }
    var libc: BinaryImage { sys("libsystem_c.dylib") }
    var dispatch: BinaryImage { sys("libdispatch.dylib") }
    var cf: BinaryImage { sys("CoreFoundation") }
    var foundation: BinaryImage { sys("Foundation") }
    var uikit: BinaryImage { sys("UIKitCore") }
    var swiftCore: BinaryImage { sys("libswiftCore.dylib") }
    var objc: BinaryImage { sys("libobjc.A.dylib") }
    var cxxabi: BinaryImage { sys("libc++abi.dylib") }
    var dyld: BinaryImage { sys("dyld") }
    var sqlite: BinaryImage { sys("libsqlite3.dylib") }

    /// The main thread below the app's code: UIKit event handling, the run loop, `main`, dyld.
    func mainThreadBase(_ rng: inout SplitMix64) -> [(BinaryImage, UInt64)] {
        var frames: [(BinaryImage, UInt64)] = []
        let uikitDepth = rng.int(in: 2...14)
        for i in 0..<uikitDepth {
            frames.append((uikit, 0x1_2f_4000 + UInt64(i) * 0x3_1a8 + UInt64(rng.int(in: 0...40)) * 4))
        }
        frames += [
            (cf, 0x3_6a4c), (cf, 0x3_5e18), (cf, 0x3_4b2c), (cf, 0x3_3d0c), (cf, 0x3_2a14),
            (sys("GraphicsServices"), 0x1_4f8), (uikit, 0x3_aa2e4), (uikit, 0x3_a9920),
            (app, 0x8_a1c), (dyld, 0x5_6dc),
        ]
        return frames
    }

    /// A dispatch worker thread below the app's code.
    var dispatchBase: [(BinaryImage, UInt64)] {
        [
            (dispatch, 0x2_370), (dispatch, 0x3_fdc), (dispatch, 0x1_b7a0), (dispatch, 0x1_c2d4),
            (dispatch, 0x2_3e6c), (pthread, 0x1_e60), (pthread, 0x1_ab8),
        ]
    }

    /// Threads that are not attributed: idle workers, the event-fetch thread, sometimes an empty one.
    func bystanders(_ rng: inout SplitMix64) -> [SimThread] {
        var threads: [SimThread] = []
        for _ in 0..<rng.int(in: 2...6) {
            switch rng.int(in: 0...4) {
            case 0:
                threads.append(SimThread(attributed: false, frames: []))
            case 1:
                threads.append(
                    SimThread(
                        attributed: false,
                        frames: [
                            (kernel, 0x1_ce4), (kernel, 0x1_2f28), (kernel, 0x1_4a0c), (kernel, 0x2_034),
                            (cf, 0x9_a3b0), (cf, 0x9_8c4c), (cf, 0x9_8430), (foundation, 0x7_4f2c),
                            (foundation, 0x7_3e14), (uikit, 0x4_a2d8c), (foundation, 0x6_1b30), (pthread, 0x1_e60),
                            (pthread, 0x1_ab8),
                        ]))
            default:
                threads.append(
                    SimThread(attributed: false, frames: [(kernel, 0x1_5a8), (pthread, 0x1_d84), (pthread, 0x1_aa8)]))
            }
        }
        return threads
    }
}
