import LifelineModel
import Testing

@Suite("Call-stack trees flatten iteratively")
struct CallStackTreesFlatten {
    @Test("the real per-thread tree fixture decodes through the exposed helper")
    func realPerThreadTree() throws {
        let tree = try MetricKitDecoder.decodeCallStackTree(
            try Fixtures.bytes("callstacktrees/getsentry_sentry-cocoa__tree-real.json"))
        #expect(tree.callStackPerThread)
        #expect(tree.callStacks.count == 16)
        #expect(tree.callStacks[0].threadAttributed == true)
        #expect(tree.callStacks[0].frames.count == 27)
        let root = tree.callStacks[0].frames[0].frame
        #expect(root.binaryName == "Sentry")
        #expect(root.address == 4_312_798_220)
        #expect(root.offsetIntoBinaryTextSegment == 414_732)
        #expect(root.textOffset == 414_732)
        #expect(tree.attributedChain.count == 27)
        #expect(tree.attributedChain[1].binaryName == "iOS-Swift")
    }

    @Test("the flame-graph fixture flattens in pre-order with depths")
    func flameGraphTree() throws {
        let tree = try MetricKitDecoder.decodeCallStackTree(
            try Fixtures.bytes("callstacktrees/getsentry_sentry-cocoa__not-per-thread.json"))
        #expect(tree.callStackPerThread == false)
        #expect(tree.callStacks.count == 1)
        let frames = tree.callStacks[0].frames
        #expect(frames.map(\.depth) == [0, 1, 2, 2, 3, 3, 3, 2, 2, 1, 0, 1, 2, 2])
        #expect(frames[0].frame.sampleCount == 7)
        #expect(frames[4].frame.address == 4_310_988_066)
        #expect(frames[5].frame.binaryName == "libswiftCore.dylib")
    }

    @Test("a 150-deep subFrames chain is accepted with correct depths")
    func deepChainIsAccepted() throws {
        let tree = try MetricKitDecoder.decodeCallStackTree(Array(Self.chain(depth: 150).utf8))
        let frames = tree.callStacks[0].frames
        #expect(frames.count == 150)
        #expect(frames.map(\.depth) == Array(0..<150))
        #expect(frames[149].frame.address == 4_295_000_000 + 149)
        #expect(tree.attributedChain.count == 150)
    }

    @Test("a 10,000-deep subFrames chain is refused by the depth limit, not a stack overflow")
    func tooDeepChainIsRefused() {
        let bytes = Array(Self.chain(depth: 10_000).utf8)
        let error = refusal { () throws(DecodeError) in _ = try MetricKitDecoder.decodeCallStackTree(bytes) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("nesting deeper than 512 levels at line 1 column") == true)
        // The same document as a metric body is refused the same way.
        #expect(decodeError(Self.chain(depth: 10_000))?.code == .limitExceeded)
    }

    @Test("more frames than maxFramesPerTree is a limit error")
    func frameLimit() {
        var limits = DecodeLimits()
        limits.maxFramesPerTree = 100
        let bytes = Array(Self.chain(depth: 101).utf8)
        let error = refusal { () throws(DecodeError) in
            _ = try MetricKitDecoder.decodeCallStackTree(bytes, limits: limits)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "call-stack tree has more than 100 frames")
        #expect((try? MetricKitDecoder.decodeCallStackTree(Array(Self.chain(depth: 100).utf8), limits: limits)) != nil)
    }

    @Test("full 64-bit addresses survive")
    func fullWidthAddresses() throws {
        let json = """
            {"callStackPerThread": true, "callStacks": [{"threadAttributed": true, "callStackRootFrames": [
              {"binaryName": "App", "address": 18446744073709551615, "offsetIntoBinaryTextSegment": 9223372036854775808}
            ]}]}
            """
        let tree = try MetricKitDecoder.decodeCallStackTree(Array(json.utf8))
        #expect(tree.callStacks[0].frames[0].frame.address == UInt64.max)
        #expect(tree.callStacks[0].frames[0].frame.offsetIntoBinaryTextSegment == 1 << 63)
    }

    /// A per-thread tree whose single root has a chain of `depth` frames.
    static func chain(depth: Int) -> String {
        var json = #"{"callStackPerThread": true, "callStacks": [{"threadAttributed": true, "callStackRootFrames": ["#
        for level in 0..<depth {
            json +=
                #"{"binaryName": "App", "offsetIntoBinaryTextSegment": \#(level), "address": \#(4_295_000_000 + level)"#
            json += level == depth - 1 ? "}" : #", "subFrames": ["#
        }
        json += String(repeating: "]}", count: depth - 1)
        json += "]}]}"
        return json
    }
}
