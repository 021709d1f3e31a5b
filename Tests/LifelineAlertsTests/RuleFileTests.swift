import ArgumentParser
import Foundation
import LifelineAlerts
import LifelineAnalysis
import LifelineCommands
import Testing

@Suite("Rule files: decode, validate every field, then build")
struct RuleFileTests {
    @Test("the example file is valid and means what it says")
    func exampleFile() throws {
        let set = try RuleFileLoader.load(path: ExampleFile.path)
        let rule = try #require(set.rules.first { $0.name == "restoration_error_rate" })
        #expect(rule.measure == .restorationErrorRate)
        #expect(rule.op == .greater && rule.threshold == 0.001)
        #expect(rule.windowDays == 1 && rule.groupBy == [.version])
        #expect(rule.forSeconds == 7200 && rule.keepFiringForSeconds == 1800 && rule.minSamples == 1000)
        #expect(rule.labels["severity"] == "page")
        #expect(set.receivers.map(\.name) == ["team-webhook", "alertmanager"])
        #expect(set.receivers(for: ["severity": "page"]).map(\.name) == ["alertmanager", "team-webhook"])
        #expect(set.receivers(for: ["severity": "ticket"]).map(\.name) == ["team-webhook"])
        let summary = try #require(rule.annotations["summary"])
        let text = summary.render(
            .init(value: 0.0042, threshold: 0.001, samples: 2000, labels: ["version": "4.2.0"]))
        #expect(text == "Restoration error rate 0.42% on 4.2.0")
    }

    @Test("every problem of a file is reported with its line and rule, and nothing is built")
    func everyProblemWithLine() throws {
        let text = """
            evaluation_interval: soon
            groups:
              - name: g
                rules:
                  - name: restoration_error_rate
                    query: restoration_error_rate
                    op: ">"
                    threshold: high
                    window: 36h
                  - name: slow
                    query: percentile(launch.time_to_first_draw, 95)
                    op: "=>"
                    threshold: 800
                    for: forever
                    group_by: [version, planet]
                    annotations:
                      summary: "{{ $value | percent }} on {{ $labels.build }}"
                  - name: slow
                    query: device_days
                    op: ">"
                    threshold: 1
                    colour: red
            receivers:
              - name: hook
                webhook: {url: "ftp://example.com"}
            route:
              receiver: nobody
            """
        #expect {
            try RuleFileLoader.parse(text, file: "rules.yaml")
        } throws: { error in
            guard let error = error as? RuleFileError else { return false }
            let lines = error.problems.map(\.description)
            let expected = [
                "rules.yaml:1: evaluation_interval must be a duration",
                #"rules.yaml:8: rule "restoration_error_rate": threshold must be a number"#,
                #"rules.yaml:9: rule "restoration_error_rate": window must be whole days"#,
                #"rules.yaml:11: rule "slow": query: column 39: the quantile must be between 0 and 1"#,
                #"rules.yaml:12: rule "slow": op must be one of"#,
                #"rules.yaml:14: rule "slow": for must be a duration"#,
                #"rules.yaml:15: rule "slow": group_by: "planet" is not one of"#,
                #"rules.yaml:17: rule "slow": annotations.summary: $labels.build is not a label of this rule"#,
                #"rules.yaml:18: rule "slow": the name is already used on line 10"#,
                #"rules.yaml:22: rule "slow": unknown field "colour""#,
                #"rules.yaml:25: receiver "hook": url must be an http:// or https:// URL"#,
                #"rules.yaml:27: route: receiver "nobody" is not defined under receivers"#,
            ]
            for prefix in expected where !lines.contains(where: { $0.hasPrefix(prefix) }) {
                Issue.record("missing \(prefix)\n got:\n\(lines.joined(separator: "\n"))")
            }
            return lines.count == expected.count
        }
    }

    @Test("YAML syntax errors carry their line")
    func syntaxError() {
        #expect {
            try RuleFileLoader.parse("groups:\n  - name: [unclosed\n", file: "bad.yaml")
        } throws: { error in
            guard let problem = (error as? RuleFileError)?.problems.first else { return false }
            return problem.file == "bad.yaml" && problem.line != nil && problem.message.contains("YAML syntax error")
        }
    }

    @Test(
        "durations read like Prometheus'",
        arguments: [("90s", 90), ("5m", 300), ("2h", 7200), ("1d", 86_400), ("1h30m", 5400), ("0", 0), ("1w", 604_800)]
    )
    func durations(text: String, seconds: Int64) {
        #expect(RuleDuration.seconds(text) == seconds)
        #expect(RuleDuration.seconds(RuleDuration.format(seconds)) == seconds)
    }

    @Test("malformed durations are refused", arguments: ["", "5", "m5", "1m1h", "1.5h", "-1h", "1y"])
    func badDurations(text: String) {
        #expect(RuleDuration.seconds(text) == nil)
    }

    @Test("annotation templates format values and refuse unknown formatters")
    func templates() throws {
        let context = AnnotationTemplate.Context(
            value: 1234.5, threshold: 800, samples: 31, labels: ["version": "4.2"])
        #expect(try AnnotationTemplate("{{$value|ms}} > {{ $threshold | ms }}").render(context) == "1.23 s > 800 ms")
        #expect(try AnnotationTemplate("{{ $value | humanize }} ({{ $samples }})").render(context) == "1.23k (31)")
        #expect(
            try AnnotationTemplate("{{ $value | fixed 1 }} on {{ $labels.version }}").render(context) == "1234.5 on 4.2"
        )
        #expect(
            try AnnotationTemplate("{{ $value }}").render(.init(value: nil, threshold: 0, samples: 0, labels: [:]))
                == "n/a")
        #expect(throws: TemplateError.self) { try AnnotationTemplate("{{ $value | shout }}") }
        #expect(throws: TemplateError.self) { try AnnotationTemplate("{{ $valeu }}") }
        #expect(throws: TemplateError.self) { try AnnotationTemplate("{{ $value ") }
    }

    @Test("`lifeline rules check` fails on a bad file and passes the example")
    func checkCommand() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rules-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = directory.appendingPathComponent("rules.yaml").path
        try
            "groups:\n  - name: g\n    rules:\n      - name: x\n        query: nope\n        op: \">\"\n        threshold: 1\n"
            .write(toFile: bad, atomically: true, encoding: .utf8)

        var command = try LifelineCommand.parseAsRoot(["rules", "check", bad])
        #expect {
            try command.run()
        } throws: { error in
            (error as? ExitCode)?.rawValue == 1
        }
        command = try LifelineCommand.parseAsRoot(["rules", "check", ExampleFile.path])
        try command.run()
    }
}
