/// Adversarial request bodies of a chosen size, for `lifeline bench hostile`: the shapes of
/// issue 11's attacks and their neighbours. Each is well-formed JSON that reaches the decoder.
enum HostileShape: String, CaseIterable {
    /// One 1/2-size section key over tiny `"a":1` leaves (was: a copy of the key per leaf).
    case longKey = "long-key"
    /// Many distinct scalar leaves in one section (refused past maxMetricsPerDocument).
    case manyLeaves = "many-leaves"
    /// `foregroundExitData` repeated (was: quadratic reserveCapacity).
    case repeatedExitKeys = "repeated-exit-keys"
    /// A 250-deep flame-graph chain with every other frame at the bottom (was: O(depth × frames)).
    case deepFlame = "deep-flame"
    /// Empty frames `{}` in per-thread trees, up to the frame caps.
    case emptyFrames = "empty-frames"
    /// Arrays of empty arrays in a metric section: tape tokens only.
    case emptyArrays = "empty-arrays"
    /// Measurement strings written with `\u` escapes.
    case escapedLeaves = "escaped-leaves"
    /// Histograms of many buckets.
    case manyBuckets = "many-buckets"
    /// Numbers of 1,000 digits.
    case longNumbers = "long-numbers"
    /// 1,000 metric documents in one array body, 32 metrics each, padded with an ignored string.
    case manyDocuments = "many-documents"
    /// Metric documents of 1,000 distinct metrics each (just under the per-document cap): the most
    /// stored rows per byte, up to the per-body cap.
    case denseDocuments = "dense-documents"

    static let head =
        #"{"timeStampBegin":"2026-11-20 00:00:00 +0000","timeStampEnd":"2026-11-21 00:00:00 +0000","#
        + #""metaData":{"appBuildVersion":"1","osVersion":"iPhone OS 17.4 (21E219)","deviceType":"iPhone15,2"},"#
        + #""appVersion":"1.0","#

    /// A body of about `size` bytes (never more than `size` + 1 KB).
    func body(size: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(size + 1_024)
        func add(_ text: String) { out.append(contentsOf: text.utf8) }
        func repeatUntil(_ limit: Int, separator: String = ",", _ item: (Int) -> String) {
            var index = 0
            while out.count < limit {
                if index > 0 { add(separator) }
                add(item(index))
                index += 1
            }
        }
        switch self {
        case .longKey:
            add(Self.head + "\"" + String(repeating: "k", count: size / 2) + "\":{")
            repeatUntil(size) { _ in #""a":1"# }
            add("}}")
        case .manyLeaves:
            add(Self.head + #""s":{"#)
            repeatUntil(size) { #""m\#($0)":"\#($0 % 1000) ms""# }
            add("}}")
        case .repeatedExitKeys:
            add(Self.head + #""applicationExitMetrics":{"#)
            repeatUntil(size) { _ in #""foregroundExitData":{"cumulativeNormalAppExitCount":1}"# }
            add("}}")
        case .deepFlame:
            let depth = 250
            add(#"{"diagnosticMetaData":{"exceptionType":1,"signal":11},"callStackTree":{"callStackPerThread":false,"#)
            add(#""callStacks":[{"callStackRootFrames":["#)
            for level in 0..<depth {
                add(
                    #"{"binaryName":"App","address":\#(level),"offsetIntoBinaryTextSegment":\#(level),"sampleCount":2,"#
                )
                add(#""subFrames":["#)
            }
            repeatUntil(size - depth * 4) { #"{"address":\#($0),"sampleCount":1}"# }
            for _ in 0..<depth { add("]}") }
            add("]}]}}")
        case .emptyFrames:
            add(#"{"diagnosticMetaData":{"exceptionType":1,"signal":11},"callStackTree":{"callStackPerThread":true,"#)
            add(#""callStacks":["#)
            repeatUntil(size) { _ in
                #"{"callStackRootFrames":["# + Array(repeating: "{}", count: 1_000).joined(separator: ",") + "]}"
            }
            add("]}}")
        case .emptyArrays:
            add(Self.head + #""s":{"x":["#)
            repeatUntil(size) { _ in "[]" }
            add("]}}")
        case .escapedLeaves:
            add(Self.head + #""s":{"#)
            repeatUntil(size) { #""\u006d\#($0)":"\u0031\u0032\u0020\u006d\u0073""# }
            add("}}")
        case .manyBuckets:
            add(Self.head + #""h":{"#)
            var histogram = 0
            while out.count < size {
                if histogram > 0 { add(",") }
                add(#""h\#(histogram)":{"histogramNumBuckets":4096,"histogramValue":{"#)
                for bucket in 0..<4_096 where out.count < size || bucket == 0 {
                    if bucket > 0 { add(",") }
                    add(
                        #""\#(bucket)":{"bucketStart":"\#(bucket) ms","bucketEnd":"\#(bucket + 1) ms","bucketCount":1}"#
                    )
                }
                add("}}")
                histogram += 1
            }
            add("}}")
        case .longNumbers:
            let digits = "0." + String(repeating: "7", count: 1_000)
            add(Self.head + #""s":{"#)
            repeatUntil(size) { #""n\#($0)":\#(digits)"# }
            add("}}")
        case .manyDocuments:
            let perDocument = max(1_024, size / 1_000)
            add("[")
            for document in 0..<1_000 {
                if document > 0 { add(",") }
                let start = out.count
                add(Self.head + #""s":{"# + (0..<32).map { #""m\#($0)":"\#(document) ms""# }.joined(separator: ","))
                add(
                    #"},"pad":""# + String(repeating: "p", count: max(0, perDocument - (out.count - start) - 4)) + "\"}"
                )
            }
            add("]")
        case .denseDocuments:
            add("[")
            var document = 0
            while out.count < size {
                if document > 0 { add(",") }
                add(Self.head + #""s":{"# + (0..<1_000).map { #""m\#($0)":\#($0)"# }.joined(separator: ",") + "}}")
                document += 1
            }
            add("]")
        }
        return out
    }
}
