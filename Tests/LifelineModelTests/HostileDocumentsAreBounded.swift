import LifelineModel
import Testing

/// The shapes of issue 11's attacks (and their neighbours): each is refused with a limit error or
/// decoded with the implausible part dropped and counted, never amplified.
@Suite("Hostile documents are bounded")
struct HostileDocumentsAreBounded {
    static let head = #"{"timeStampBegin":"2026-11-20 00:00:00 +0000","timeStampEnd":"2026-11-21 00:00:00 +0000","#

    /// A metric document with `sections` spliced after its timestamps.
    static func metric(_ sections: String) -> String { head + sections + "}" }

    @Test("a 512 KB section key over 87,000 leaves is dropped whole, not copied per leaf")
    func longSectionKey() throws {
        let key = String(repeating: "k", count: 512 * 1024)
        let leaves = (0..<87_000).map { "\"a\($0)\":1" }.joined(separator: ",")
        let documents = try decodeJSON(Self.metric("\"\(key)\":{\(leaves)}"), family: .metric)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("not a metric payload")
            return
        }
        #expect(payload.scalars.isEmpty)
        #expect(documents[0].droppedValues == 1)
    }

    @Test("a nested path longer than the name limit drops only that subtree")
    func longNestedPath() throws {
        let deepKey = String(repeating: "p", count: 200)
        let text = Self.metric(
            #""cellularConditionMetrics":{"\#(deepKey)":{"\#(deepKey)":{"x":"1 bars"}},"ok":"2 bars"}"#)
        let payload = try #require(decodeMetric(text))
        #expect(payload.scalars.map(\.name) == ["cellularConditionMetrics.ok"])
    }

    @Test("more leaves than maxMetricsPerDocument is a limit error naming the document")
    func tooManyMetrics() {
        let leaves = (0..<5_000).map { "\"m\($0)\":\"1 ms\"" }.joined(separator: ",")
        let error = decodeError(Self.metric("\"s\":{\(leaves)}"), family: .metric)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "document 1: more than 1024 metrics")
    }

    @Test("the metrics of all documents in one body are capped together")
    func metricsPerBody() {
        let document = Self.metric("\"s\":{" + (0..<1_000).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}")
        let body = "[" + Array(repeating: document, count: 33).joined(separator: ",") + "]"
        let error = decodeError(body, family: .metric)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "document 33: the body's documents hold more than 32768 metrics")
        let fits = "[" + Array(repeating: document, count: 32).joined(separator: ",") + "]"
        #expect(decodeError(fits, family: .metric) == nil)
    }

    @Test("foregroundExitData repeated 128,000 times is refused, not decoded quadratically")
    func repeatedExitKeys() {
        let one = #""foregroundExitData":{"cumulativeNormalAppExitCount":1}"#
        let body = Self.metric(
            "\"applicationExitMetrics\":{" + Array(repeating: one, count: 128_000).joined(separator: ",") + "}")
        let error = decodeError(body, family: .metric)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "document 1: more than 1024 exit counters")
    }

    @Test("exit counts of Int64.max, -4, 1e16, 1e20 and 2.5 are dropped and counted; the normal one stays")
    func implausibleExitCounts() throws {
        let text = Self.metric(
            #""applicationExitMetrics":{"foregroundExitData":{"cumulativeNormalAppExitCount":3,"#
                + #""cumulativeMemoryResourceLimitExitCount":9223372036854775807,"#
                + #""cumulativeAppWatchdogExitCount":-4,"cumulativeBadAccessExitCount":1e16,"#
                + #""cumulativeAbnormalExitCount":1e20,"cumulativeIllegalInstructionExitCount":2.5}}"#)
        let documents = try decodeJSON(text, family: .metric)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("not a metric payload")
            return
        }
        #expect(payload.exits == [ExitCount(state: .foreground, reason: "NormalApp", count: 3)])
        #expect(documents[0].droppedValues == 5)
    }

    @Test("a histogram bucket with an absurd bound or count is dropped; the others keep their order")
    func implausibleBuckets() throws {
        let text = Self.metric(
            #""applicationResponsivenessMetrics":{"histogrammedAppHangTime":{"histogramNumBuckets":3,"#
                + #""histogramValue":{"0":{"bucketStart":"0 ms","bucketEnd":"100 ms","bucketCount":5},"#
                + #""1":{"bucketStart":"100 ms","bucketEnd":"100000000000000000000 ms","bucketCount":1},"#
                + #""2":{"bucketStart":"100 ms","bucketEnd":"200 ms","bucketCount":99999999999}}}}"#)
        let documents = try decodeJSON(text, family: .metric)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("not a metric payload")
            return
        }
        let histogram = try #require(payload.histogram("applicationResponsivenessMetrics.histogrammedAppHangTime"))
        #expect(histogram.buckets == [HistogramBucket(start: 0, end: 100, count: 5)])
        #expect(documents[0].droppedValues == 2)
    }

    @Test("non-finite, negative and absurd scalars are dropped; a timestamp before 2000 keeps only its text")
    func implausibleScalarsAndTimes() throws {
        let text =
            #"{"timeStampBegin":"0001-01-01 00:00:00 +0100","timeStampEnd":"2026-11-21 00:00:00 +0000","#
            + #""memoryMetrics":{"peakMemoryUsage":"-5 kB","averageSuspendedMemory":{"#
            + #""averageValue":"5000000000000000 kB","standardDeviation":0,"sampleCount":1},"ok":"12 kB"},"#
            + #""cpuMetrics":{"cumulativeCPUTime":"99999999 sec"}}"#
        let documents = try decodeJSON(text, family: .metric)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("not a metric payload")
            return
        }
        #expect(payload.scalars.map(\.name) == ["memoryMetrics.ok"])
        #expect(payload.begin?.epochSeconds == nil)
        #expect(payload.begin?.raw == "0001-01-01 00:00:00 +0100")
        #expect(documents[0].droppedValues == 4)
    }

    @Test("the frames of all trees in one body are capped together")
    func framesPerBody() {
        let frame = #"{"binaryName":"App","offsetIntoBinaryTextSegment":1,"address":2}"#
        let diagnostic =
            #"{"diagnosticMetaData":{"exceptionType":1,"signal":11},"callStackTree":{"callStackPerThread":true,"#
            + #""callStacks":[{"threadAttributed":true,"callStackRootFrames":["#
            + Array(repeating: frame, count: 600).joined(separator: ",") + "]}]}}"
        var limits = DecodeLimits()
        limits.maxFramesPerBody = 1_000
        let body = "[" + diagnostic + "," + diagnostic + "]"
        let error = decodeError(body, family: .diagnostic, limits: limits)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "document 2: the body's call-stack trees hold more than 1000 frames")
        #expect(decodeError("[" + diagnostic + "]", family: .diagnostic, limits: limits) == nil)
    }

    @Test("a number of 100,000 digits is not handed to strtod; a very long escaped key is not copied per comparison")
    func longNumbersAndEscapedKeys() throws {
        let digits = "0." + String(repeating: "1", count: 100_000)
        let escaped = String(repeating: "\\u0061", count: 50_000)
        let text = Self.metric(#""s":{"n":\#(digits),"\#(escaped)":"1 ms"}"#)
        let payload = try #require(decodeMetric(text))
        #expect(payload.scalars.isEmpty)
    }

    @Test("the heaviest flame-graph chain is the same as a brute-force walk over random trees")
    func heaviestChainMatchesBruteForce() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var frames: [FlatFrame] = []
            var depth = 0
            for i in 0..<Int.random(in: 1...60, using: &rng) {
                depth = i == 0 ? 0 : Int.random(in: 0...(depth + 1), using: &rng)
                frames.append(
                    FlatFrame(
                        depth: depth,
                        frame: Frame(
                            binaryUUID: nil, binaryName: "B", address: UInt64(i),
                            offsetIntoBinaryTextSegment: UInt64(i),
                            sampleCount: Int64.random(in: 0...5, using: &rng))))
            }
            let tree = CallStackTree(
                callStackPerThread: false, callStacks: [CallStack(threadAttributed: nil, frames: frames)])
            #expect(CrashSignature.signatureChain(tree).map(\.address) == Self.bruteForceChain(frames))
        }
    }

    /// The definition, quadratic: heaviest root, then the heaviest direct child at each level (first wins ties).
    static func bruteForceChain(_ frames: [FlatFrame]) -> [UInt64] {
        func heaviest(_ candidates: [Int]) -> Int? {
            var best: Int?
            for c in candidates
            where best == nil || (frames[c].frame.sampleCount ?? 0) > (frames[best ?? c].frame.sampleCount ?? 0) {
                best = c
            }
            return best
        }
        var chain: [UInt64] = []
        var current = heaviest(frames.indices.filter { frames[$0].depth == 0 })
        while let index = current {
            chain.append(frames[index].frame.address)
            var children: [Int] = []
            var k = index + 1
            while k < frames.count && frames[k].depth > frames[index].depth {
                if frames[k].depth == frames[index].depth + 1 { children.append(k) }
                k += 1
            }
            current = heaviest(children)
        }
        return chain
    }
}

/// The metric payload of a one-document body, or `nil`.
private func decodeMetric(_ text: String) -> MetricPayload? {
    guard let documents = try? decodeJSON(text, family: .metric), case .metric(let payload) = documents.first?.content
    else { return nil }
    return payload
}
