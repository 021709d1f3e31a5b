import Foundation
import LifelineAlerts
import LifelineAnalysis
import LifelineModel
import Testing

@Suite("The rule query language")
struct QueryParserTests {
    @Test(
        "every documented form parses into its measure",
        arguments: [
            ("device_days", Measure.deviceDays),
            (
                #"exit_rate{state="background",reason="BackgroundTaskAssertionTimeout"}"#,
                .exitRate(state: .background, reason: "BackgroundTaskAssertionTimeout")
            ),
            (#"exits{ reason = 'MemoryPressure' }"#, .exits(state: nil, reason: "MemoryPressure")),
            ("exits", .exits(state: nil, reason: nil)),
            (#"signposts{name="X",category="Y"}"#, .signposts(category: "Y", name: "X")),
            (#"diagnostics{kind="crash"}"#, .diagnostics(kind: .crash)),
            ("watchdog_terminations", .watchdogTerminations),
            ("new_crash_groups", .newCrashGroups),
            (
                "percentile(launch.time_to_first_draw, 0.95)",
                .percentile(.metric("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"), 0.95)
            ),
            (
                #"percentile(signpost{category="StateRestoration",name="RestoreAttempt"}, 0.95)"#,
                .percentile(.signpost(category: "StateRestoration", name: "RestoreAttempt"), 0.95)
            ),
            (
                #"percentile(metric="applicationResponsivenessMetrics.histogrammedAppHangTime", 0.5)"#,
                .percentile(.metric("applicationResponsivenessMetrics.histogrammedAppHangTime"), 0.5)
            ),
            ("handler_imbalance_ratio", .handlerImbalanceRatio),
            ("handler_imbalance", .handlerImbalance),
            ("restoration_error_rate", .restorationErrorRate),
            ("ratio(watchdog_terminations, device_days)", .ratio(.watchdogTerminations, .deviceDays)),
            (
                #"scale(ratio(exits{state="background"}, device_days), 1000)"#,
                .scaled(.ratio(.exits(state: .background, reason: nil), .deviceDays), 1000)
            ),
            (
                #"explorer{metric="memory.peak", stat="p90"}"#,
                .explorer(metric: "memory.peak", statistic: .p90)
            ),
            (#"explorer{metric="disk.logical_writes"}"#, .explorer(metric: "disk.logical_writes", statistic: .p50)),
            (
                #"regression{metric="launch.time_to_first_draw",percentile="50"}"#,
                .regression(metric: "launch.time_to_first_draw", percentile: 0.5)
            ),
        ])
    func parses(text: String, expected: Measure) throws {
        let measure = try QueryParser.parse(text)
        #expect(measure == expected)
        #expect(try QueryParser.parse(QueryFormatter.format(measure)) == measure)
        // Only the explorer's measures (alone or inside another) make a rule's read wait for the
        // explorer's held rows.
        #expect(measure.readsExplorer == (text.hasPrefix("explorer") || text.hasPrefix("regression")))
    }

    @Test("a measure reads the explorer's rows when any part of it does")
    func readsExplorerWhenAnyPartDoes() {
        let explorer = Measure.explorer(metric: "memory.peak", statistic: .p90)
        #expect(Measure.ratio(.deviceDays, explorer).readsExplorer)
        #expect(Measure.scaled(.ratio(explorer, .deviceDays), 2).readsExplorer)
        #expect(!Measure.scaled(.ratio(.exits(state: nil, reason: nil), .deviceDays), 1000).readsExplorer)
    }

    @Test(
        "a wrong query names the column and the problem",
        arguments: [
            ("exitz", 1, "unknown measure \"exitz\""),
            ("ratio(device_days device_days)", 19, "expected ','"),
            (#"exits{state="sideways"}"#, 7, "state must be"),
            (#"signposts{category="A"}"#, 1, "signposts needs a name"),
            ("percentile(launch.time_to_first_draw, 95)", 39, "between 0 and 1"),
            ("percentile(launch.nope, 0.9)", 12, "unknown histogram"),
            (#"device_days{app="x"}"#, 13, "has no label \"app\""),
            (#"exits{reason="x"} extra"#, 19, "after the end of the query"),
            (#"exits{reason="x}"#, 14, "string is not closed"),
            ("scale(device_days, )", 20, "expected a number"),
            (#"explorer{metric="memory.top"}"#, 10, "unknown explorer metric"),
            (#"explorer{metric="memory.peak",stat="p99"}"#, 31, "stat must be one of"),
            (#"regression{metric="memory.peak",percentile="95"}"#, 33, "percentile must be"),
            ("regression", 1, "regression needs a metric"),
        ])
    func reportsColumn(text: String, column: Int, message: String) {
        #expect {
            try QueryParser.parse(text)
        } throws: { error in
            guard let error = error as? QuerySyntaxError else { return false }
            return error.column == column && error.message.contains(message)
        }
    }

    @Test("every query of the example rule file round-trips through the canonical form")
    func exampleFileRoundTrips() throws {
        let set = try RuleFileLoader.load(path: ExampleFile.path)
        #expect(set.rules.count == 10)
        for rule in set.rules {
            let parsed = try QueryParser.parse(rule.query)
            #expect(parsed == rule.measure)
            let canonical = QueryFormatter.format(rule.measure)
            #expect(try QueryParser.parse(canonical) == rule.measure, "\(rule.name): \(canonical)")
            #expect(QueryFormatter.format(try QueryParser.parse(canonical)) == canonical)
        }
    }
}

/// `config/rules.example.yaml` of this repository.
enum ExampleFile {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("config/rules.example.yaml").path
}
