import LifelineModel
import Testing

@Suite("Malformed JSON is refused with its position")
struct MalformedJSONIsRefused {
    @Test(
        "each error names what and where",
        arguments: [
            ("{\"a\": 1,\n  \"b\": }", "unexpected character '}', expected a value at line 2 column 8", 16),
            ("{\"a\" 1}", "expected ':' after object key at line 1 column 6", 5),
            ("[1, 2", "unexpected end of input, unclosed array at line 1 column 6", 5),
            ("{\"a\": \"abc", "unterminated string at line 1 column 7", 6),
            ("{\"a\": tru}", "invalid literal, expected 'true' at line 1 column 7", 6),
            ("{\"a\": 01}", "invalid number, leading zero at line 1 column 7", 6),
            ("{\"a\": 1} x", "unexpected character 'x' after the end of the JSON value at line 1 column 10", 9),
            ("{\"a\": \"\\q\"}", "invalid escape '\\q' in string at line 1 column 8", 7),
            ("{\"a\": \"\\u12G4\"}", "invalid \\u escape in string, expected 4 hex digits at line 1 column 8", 7),
            ("", "empty body, expected a JSON value at line 1 column 1", 0),
            ("{1: 2}", "unexpected character '1', expected a string key at line 1 column 2", 1),
            ("{\"a\": [1,]}", "unexpected character ']', expected a value at line 1 column 10", 9),
        ])
    func saysWhere(_ text: String, _ message: String, _ offset: Int) throws {
        let error = try #require(decodeError(text))
        #expect(error.code == .malformedJSON)
        #expect(error.message.hasSuffix(message), "got: \(error.message)")
        #expect(error.offset == offset)
    }

    @Test("a control character inside a string is refused")
    func controlCharacter() {
        #expect(decodeError("{\"a\": \"x\ty\"}")?.message == "unescaped control character in string at line 1 column 9")
    }

    @Test("10,000 nested arrays are refused cleanly by maxDepth")
    func deepNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let error = decodeError(deep)
        #expect(error?.code == .limitExceeded)  // 413, as the README says
        #expect(error?.message == "nesting deeper than 512 levels at line 1 column 513")
        var limits = DecodeLimits()
        limits.maxDepth = 20_000
        // With a huge limit the parser still does not recurse: it parses, then the shape is refused.
        #expect(decodeError(deep, limits: limits)?.code == .notMetricKit)
    }

    @Test("strings longer than maxStringBytes are a limit error")
    func longString() {
        var limits = DecodeLimits()
        limits.maxStringBytes = 20
        let error = decodeError(#"{"timeStampBegin": "2019-10-21 07:00:00 +0000"}"#, limits: limits)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.hasPrefix("string of 25 bytes longer than the limit of 20 at line 1 column 20") == true)
    }

    @Test("escapes, surrogate pairs and raw UTF-8 decode correctly")
    func escapesDecode() throws {
        let json = #"""
            {"timeStampBegin": "2026-01-01 00:00:00 +0000", "timeStampEnd": "2026-01-01 00:00:00 +0000",
             "appVersion": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n 中文",
             "metaData": {"deviceType": "iPhone15,2", "osVersion": "iPhone OS 17.4 (21E219)"},
             "cpuMetrics": {"cumulativeCPUTime": "1,530毫秒", "cumulative\u0043PUInstructions": "5 kiloinstructions"}}
            """#
        let documents = try decodeJSON(json)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        #expect(payload.meta.appVersion == "café 😀 \"q\" \\ / \n 中文")
        #expect(payload.scalar("cpuMetrics.cumulativeCPUTime")?.measurement.value == 1530)
        #expect(payload.scalar("cpuMetrics.cumulativeCPUInstructions")?.measurement.value == 5000)
    }

    @Test("numbers of every JSON form are read")
    func numbers() throws {
        let json = """
            {"timeStampBegin": "2026-01-01 00:00:00 +0000", "metaData": {"pid": 1e3},
             "custom": {"a": 0.25, "b": 1.5E+2, "c": 123456789012, "d": -0.25, "e": 123456789012345680}}
            """
        let documents = try decodeJSON(json)
        // Negative and implausibly large counts are read, then dropped (ValueBounds).
        #expect(documents[0].droppedValues == 2)
        guard case .metric(let payload) = documents[0].content else {
            Issue.record("expected a metric payload")
            return
        }
        #expect(payload.meta.pid == 1000)
        #expect(payload.scalar("custom.a")?.measurement.value == 0.25)
        #expect(payload.scalar("custom.b")?.measurement.value == 150)
        #expect(payload.scalar("custom.c")?.measurement.value == 123_456_789_012)
        #expect(payload.scalar("custom.d") == nil && payload.scalar("custom.e") == nil)
        #expect(payload.scalar("custom.c")?.measurement.unit == .count)
    }
}
