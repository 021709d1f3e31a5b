import LifelineModel
import Testing

@Suite("Measurement strings parse leniently into canonical units")
struct MeasurementStringsParse {
    struct Case: Sendable, CustomTestStringConvertible {
        var raw: String
        var value: Double
        var unit: MeasurementUnit
        var testDescription: String { "\"\(raw)\" → \(value) \(unit.rawValue)" }
    }

    static let cases: [Case] = [
        // English, as MetricKit writes them.
        Case(raw: "200,000 kB", value: 200_000_000, unit: .bytes),
        Case(raw: "200000 kB", value: 200_000_000, unit: .bytes),
        Case(raw: "30,000 ms", value: 30_000, unit: .milliseconds),
        Case(raw: "100 sec", value: 100_000, unit: .milliseconds),
        Case(raw: "20 secs.", value: 20_000, unit: .milliseconds),
        Case(raw: "20 sec", value: 20_000, unit: .milliseconds),
        Case(raw: "2,000 byte", value: 2000, unit: .bytes),
        Case(raw: "50 ms per s", value: 50, unit: .millisecondsPerSecond),
        Case(raw: "100 kiloinstructions", value: 100_000, unit: .instructions),
        Case(raw: "50 apl", value: 50, unit: .apl),
        Case(raw: "1 bars", value: 1, unit: .bars),
        Case(raw: "12 %", value: 12, unit: .percent),
        Case(raw: "42", value: 42, unit: .count),
        Case(raw: "0.5 ms", value: 0.5, unit: .milliseconds),
        Case(raw: "3 MB", value: 3_000_000, unit: .bytes),
        Case(raw: "2 min", value: 120_000, unit: .milliseconds),
        Case(raw: "1 hour", value: 3_600_000, unit: .milliseconds),
        Case(raw: "250 µs", value: 0.25, unit: .milliseconds),
        // Chinese devices: no space, localized units.
        Case(raw: "1,530毫秒", value: 1530, unit: .milliseconds),
        Case(raw: "2,717秒", value: 2_717_000, unit: .milliseconds),
        Case(raw: "1,106,818千字节", value: 1_106_818_000, unit: .bytes),
        Case(raw: "3兆字节", value: 3_000_000, unit: .bytes),
        Case(raw: "5分钟", value: 300_000, unit: .milliseconds),
        Case(raw: "2小时", value: 7_200_000, unit: .milliseconds),
        // Other grouping and decimal marks.
        Case(raw: "1.000 ms", value: 1000, unit: .milliseconds),
        Case(raw: "1\u{202F}000 ms", value: 1000, unit: .milliseconds),
        Case(raw: "1\u{00A0}000 ms", value: 1000, unit: .milliseconds),
        Case(raw: "1 000 ms", value: 1000, unit: .milliseconds),
        Case(raw: "1'000 ms", value: 1000, unit: .milliseconds),
        Case(raw: "1,5 s", value: 1500, unit: .milliseconds),
        Case(raw: "12,345.6 ms", value: 12_345.6, unit: .milliseconds),
        Case(raw: "12.345,6 ms", value: 12_345.6, unit: .milliseconds),
        Case(raw: "1 000,5 ms", value: 1000.5, unit: .milliseconds),
        Case(raw: "0,500 ms", value: 0.5, unit: .milliseconds),
        Case(raw: "1.234.567 kB", value: 1_234_567_000, unit: .bytes),
        Case(raw: "  7 ms  ", value: 7, unit: .milliseconds),
    ]

    @Test("localized and English examples", arguments: cases)
    func parses(_ example: Case) throws {
        let measurement = Measurement.parse(example.raw)
        #expect(measurement.unit == example.unit)
        let value = try #require(measurement.value)
        #expect(abs(value - example.value) <= 1e-9 * max(1, abs(example.value)))
        #expect(measurement.raw == example.raw)
    }

    @Test(
        "garbage keeps its raw text with no value and no unit",
        arguments: ["", "abc", "ms", "12 parsecs", "--5 ms", "1,2.3,4 ms", "NaN ms"])
    func garbageIsKept(_ raw: String) {
        let measurement = Measurement.parse(raw)
        #expect(measurement.value == nil)
        #expect(measurement.unit == nil)
        #expect(measurement.raw == raw)
        #expect(!measurement.isParsed)
    }

    @Test("an unparseable value in a payload is stored raw and counted, not rejected")
    func unparseableValuesAreCounted() throws {
        let json = """
            {"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 23:59:00 +0000",
             "appVersion": "1.0", "metaData": {"osVersion": "iPhone OS 17.4 (21E219)"},
             "memoryMetrics": {"peakMemoryUsage": "lots of kB", "averageSuspendedMemory": {"averageValue": "?", "standardDeviation": 0, "sampleCount": 1}},
             "applicationLaunchMetrics": {"histogrammedResumeTime": {"histogramNumBuckets": 1,
               "histogramValue": {"0": {"bucketCount": 3, "bucketStart": "soon", "bucketEnd": "10 ms"}}}},
             "cpuMetrics": {"cumulativeCPUTime": "1,530毫秒"}}
            """
        let documents = try decodeJSON(json, family: .metric)
        #expect(documents[0].unparsedMeasurements == 3)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        #expect(
            payload.scalar("memoryMetrics.peakMemoryUsage")?.measurement
                == Measurement(value: nil, unit: nil, raw: "lots of kB"))
        #expect(payload.scalar("cpuMetrics.cumulativeCPUTime")?.measurement.value == 1530)
        #expect(
            payload.histogram("applicationLaunchMetrics.histogrammedResumeTime")?.buckets == [
                HistogramBucket(start: nil, end: 10, count: 3)
            ])
    }
}
