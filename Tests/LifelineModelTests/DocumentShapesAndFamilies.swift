import LifelineModel
import Testing

@Suite("Document shapes and families")
struct DocumentShapesAndFamilies {
    static let metric = """
        {"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 23:59:00 +0000",
         "appVersion": "1.0", "metaData": {"bundleIdentifier": "com.example.app"},
         "applicationExitMetrics": {"backgroundExitData": {"cumulativeMemoryPressureExitCount": 2}}}
        """
    static let diagnostic = """
        {"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 00:00:00 +0000",
         "hangDiagnostics": [{"version": "1.0.0", "diagnosticMetaData": {"hangDuration": "3 sec", "appVersion": "2.0"},
           "callStackTree": {"callStackPerThread": true, "callStacks": []}}]}
        """

    @Test("an array body yields one document per element with its exact byte range")
    func arrayBody() throws {
        let body = "[ " + Self.metric + " ,\n" + Self.diagnostic + "\n]"
        let bytes = Array(body.utf8)
        let documents = try MetricKitDecoder.decode(bytes, family: nil)
        #expect(documents.count == 2)
        #expect(String(decoding: bytes[documents[0].byteRange], as: UTF8.self) == Self.metric)
        #expect(String(decoding: bytes[documents[1].byteRange], as: UTF8.self) == Self.diagnostic)
        guard case .metric(let metric) = documents[0].content, case .diagnostic(let diagnostics) = documents[1].content
        else {
            Issue.record("expected a metric then a diagnostic payload")
            return
        }
        #expect(metric.exitCount(.background, "MemoryPressure") == 2)
        #expect(diagnostics.diagnostics.first?.primaryMeasurement?.value == 3000)
        #expect(diagnostics.diagnostics.first?.meta.appVersion == "2.0")
        #expect(documents[0].bundleIdentifier == "com.example.app")
    }

    @Test("a single document's byte range excludes surrounding whitespace")
    func singleDocumentRange() throws {
        let body = "\n  " + Self.metric + "  \n"
        let documents = try decodeJSON(body)
        #expect(documents[0].byteRange == 3..<(3 + Self.metric.utf8.count))
    }

    @Test("a diagnostic posted as a metric is not MetricKit, and the reverse")
    func wrongFamily() {
        let asMetric = decodeError(Self.diagnostic, family: .metric)
        #expect(asMetric?.code == .notMetricKit)
        #expect(asMetric?.message == "document 1: a diagnostic was posted where a metric payload is expected")
        let asDiagnostic = decodeError("[" + Self.diagnostic + "," + Self.metric + "]", family: .diagnostic)
        #expect(asDiagnostic?.code == .notMetricKit)
        #expect(asDiagnostic?.message.hasPrefix("document 2: a metric payload") == true)
        #expect(decodeError(Self.diagnostic, family: .diagnostic) == nil)
        #expect(decodeError(Self.metric, family: .metric) == nil)
    }

    @Test(
        "valid JSON that is not MetricKit is refused with a clear message",
        arguments: ["{}", #"{"foo": 1}"#, "42", #""text""#, "null", "[[]]"])
    func notMetricKit(_ body: String) throws {
        let error = try #require(decodeError(body))
        #expect(error.code == .notMetricKit)
        #expect(error.message.hasPrefix("document 1: "))
    }

    @Test("the second document of an array is named in the message")
    func namesTheDocument() {
        let error = decodeError("[" + Self.metric + #", {"foo": 1}]"#)
        #expect(error?.code == .notMetricKit)
        #expect(error?.message.hasPrefix("document 2: missing timeStampBegin/metaData") == true)
    }

    @Test("an empty array has no documents")
    func emptyArray() {
        let error = decodeError(" [ ] ")
        #expect(error?.code == .notMetricKit)
        #expect(error?.message.contains("no documents") == true)
    }

    @Test("more documents than maxDocuments is a limit error")
    func tooManyDocuments() {
        var limits = DecodeLimits()
        limits.maxDocuments = 2
        let body = "[" + Array(repeating: Self.metric, count: 3).joined(separator: ",") + "]"
        #expect(decodeError(body, limits: limits)?.code == .limitExceeded)
        let two = "[" + Array(repeating: Self.metric, count: 2).joined(separator: ",") + "]"
        #expect(decodeError(two, limits: limits) == nil)
    }

    @Test("unknown keys and future sections are tolerated and decoded generically")
    func unknownKeys() throws {
        let json = """
            {"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 23:59:00 +0000",
             "appVersion": "", "newTopLevelFlag": true, "someArray": [1, {"x": null}],
             "metaData": {"osVersion": "iPhone OS 27.0 (24A1)", "futureField": {"nested": [1, 2]}, "appBuildVersion": ""},
             "applicationExitMetrics": {"foregroundExitData": {"cumulativeTeleportationExitCount": 4, "weirdKey": 1},
                                        "unknownStateExitData": {"cumulativeNormalAppExitCount": 1}},
             "diskSpaceUsageMetrics": {"totalBinaryFileSize": "12,000 kB",
                                       "nested": {"cacheSize": {"averageValue": "3 MB", "standardDeviation": 0.5, "sampleCount": 4}},
                                       "futureHistogram": {"histogramNumBuckets": 1, "histogramValue": {"0": {"bucketCount": 7, "bucketStart": "1 bars", "bucketEnd": "2 bars"}}}},
             "signpostMetrics": [{"signpostName": "A", "signpostCategory": "B", "totalSignpostCount": 3, "extra": "x"}]}
            """
        let documents = try decodeJSON(json, family: .metric)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        #expect(payload.meta.appVersion == nil)  // empty string means unknown
        #expect(payload.meta.appBuildVersion == nil)
        #expect(payload.meta.osVersion == "iPhone OS 27.0 (24A1)")
        #expect(payload.exitCount(.foreground, "Teleportation") == 4)
        #expect(payload.exitCount(.foreground, "weirdKey") == 1)
        #expect(payload.exits.count == 2)
        #expect(payload.scalar("diskSpaceUsageMetrics.totalBinaryFileSize")?.measurement.value == 12_000_000)
        let average = try #require(payload.scalar("diskSpaceUsageMetrics.nested.cacheSize"))
        #expect(average.measurement.value == 3_000_000)
        #expect(average.standardDeviation == 500_000)
        #expect(average.sampleCount == 4)
        let histogram = try #require(payload.histogram("diskSpaceUsageMetrics.futureHistogram"))
        #expect(histogram.unit == .bars)
        #expect(histogram.buckets == [HistogramBucket(start: 1, end: 2, count: 7)])
        #expect(payload.signposts == [SignpostMetric(category: "B", name: "A", totalCount: 3)])
    }

    @Test("histogram buckets are sorted by start whatever the key order")
    func bucketsAreSorted() throws {
        let json = """
            {"timeStampBegin": "2026-01-01 00:00:00 +0000", "metaData": {},
             "applicationResponsivenessMetrics": {"histogrammedAppHangTime": {"histogramNumBuckets": 4, "histogramValue": {
               "3": {"bucketCount": 1, "bucketStart": "1,000 ms", "bucketEnd": "2,000 ms"},
               "1": {"bucketCount": 2, "bucketStart": "250 ms", "bucketEnd": "250 ms"},
               "0": {"bucketEnd": "100 ms", "bucketStart": "0 ms", "bucketCount": 3},
               "2": {"bucketCount": 4, "bucketStart": "300 ms", "bucketEnd": "900 ms"}}}}}
            """
        guard case .metric(let payload) = try decodeJSON(json)[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        let histogram = try #require(payload.histogram("applicationResponsivenessMetrics.histogrammedAppHangTime"))
        #expect(histogram.buckets.map(\.start) == [0, 250, 300, 1000])
        #expect(histogram.buckets.map(\.count) == [3, 2, 4, 1])
        #expect(histogram.totalCount == 10)
    }

    @Test("a diagnostic payload whose arrays were all empty decodes with no diagnostics")
    func emptyDiagnosticPayload() throws {
        let json = #"{"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 00:00:00 +0000"}"#
        let documents = try decodeJSON(json, family: .diagnostic)
        #expect(
            documents[0].content
                == .diagnostic(
                    DiagnosticPayload(
                        begin: Timestamp(epochSeconds: 1_767_225_600, raw: "2026-01-01 00:00:00 +0000"),
                        end: Timestamp(epochSeconds: 1_767_225_600, raw: "2026-01-01 00:00:00 +0000"), diagnostics: []))
        )
    }

    @Test("a diagnostic array of the wrong type is not MetricKit")
    func wrongDiagnosticArrayType() {
        let error = decodeError(#"{"timeStampBegin": "2026-01-01 00:00:00", "crashDiagnostics": 5}"#)
        #expect(error?.code == .notMetricKit)
        #expect(error?.message == "document 1: crashDiagnostics must be an array, found a number")
    }

    @Test(
        "bare diagnostics are classified from their metadata",
        arguments: [
            (#""exceptionType": 1, "signal": 11"#, DiagnosticKind.crash),
            (#""signal": 9"#, .crash),
            (#""hangDuration": "2 sec""#, .hang),
            (#""totalCPUTime": "90 sec", "totalSampledTime": "180 sec""#, .cpuException),
            (#""writesCaused": "1,073,741,824 byte""#, .diskWriteException),
            (#""launchDuration": "25 sec""#, .appLaunch),
        ])
    func bareDiagnosticKinds(_ fields: String, _ kind: DiagnosticKind) throws {
        let json = #"{"version": "1.0.0", "diagnosticMetaData": {"appVersion": "3.1", \#(fields)}}"#
        let documents = try decodeJSON(json, family: .diagnostic)
        guard case .diagnostic(let payload) = documents[0].content else {
            Issue.record("expected a diagnostic payload")
            return
        }
        #expect(payload.begin == nil)
        #expect(payload.diagnostics.first?.kind == kind)
        #expect(payload.diagnostics.first?.meta.appVersion == "3.1")
        #expect(decodeError(json, family: .metric)?.code == .notMetricKit)
    }

    @Test("a bare diagnostic without kind fields is refused")
    func bareDiagnosticWithoutKind() {
        let error = decodeError(#"{"version": "1.0.0", "diagnosticMetaData": {"appVersion": "3.1"}}"#)
        #expect(error?.code == .notMetricKit)
        #expect(error?.message.hasPrefix("document 1: cannot tell the diagnostic kind") == true)
    }

    @Test("an Objective-C exception reason is read under either key")
    func exceptionReason() throws {
        for key in ["exceptionReason", "objectiveCexceptionReason"] {
            let json = """
                {"version": "1.0.0", "diagnosticMetaData": {"exceptionType": 10, "signal": 6,
                 "\(key)": {"composedMessage": "*** -[__NSArrayM objectAtIndex:]: index 3 beyond bounds",
                  "formatString": "*** %s: index %lu beyond bounds", "arguments": ["-[__NSArrayM objectAtIndex:]", 3],
                  "exceptionType": "ExceptionTypeObjC", "className": "NSException", "exceptionName": "NSRangeException"}}}
                """
            guard case .diagnostic(let payload) = try decodeJSON(json)[0].content else {
                Issue.record("expected a diagnostic payload")
                return
            }
            let reason = try #require(payload.diagnostics.first?.exceptionReason)
            #expect(reason.exceptionName == "NSRangeException")
            #expect(reason.className == "NSException")
            #expect(reason.arguments == ["-[__NSArrayM objectAtIndex:]", "3"])
            #expect(reason.composedMessage?.hasPrefix("*** -[__NSArrayM") == true)
        }
    }
}
