import LifelineAlerts
import LifelineAnalysis
import LifelineSQLite
import LifelineTestSupport
import Synchronization
import Testing

@Suite("The evaluator as a service")
struct AlertServiceTests {
    /// A clock whose sleeps report themselves and then wait until cancelled.
    final class SteppingClock: AlertClock {
        let time: Int64
        let sleeps: AsyncStream<Duration>
        private let report: AsyncStream<Duration>.Continuation

        init(_ time: Int64) {
            self.time = time
            (sleeps, report) = AsyncStream.makeStream()
        }

        func now() -> Int64 { time }

        func sleep(for duration: Duration) async throws {
            report.yield(duration)
            try await Task.sleep(for: .seconds(3600))
        }
    }

    @Test("run() evaluates at the clock's time, waits the evaluation interval, and ends when cancelled")
    func runsUntilCancelled() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await env.ingest([Payloads.metric(day: "2026-11-01", attempts: 100, failures: 5)])
        let clock = SteppingClock(Payloads.time("2026-11-01", hour: 12))
        let evaluator = AlertEvaluator(
            analysis: AnalysisRunner(source: env.database), store: env.database.alertState,
            rules: try RuleFileLoader.parse(AlertEvaluatorTests.rules(port: 9, forDuration: "0s"), file: "r.yaml"),
            clock: clock, logger: .quiet)
        try await withThrowingTaskGroup { group in
            group.addTask { try await evaluator.run() }
            var sleeps = clock.sleeps.makeAsyncIterator()
            #expect(await sleeps.next() == .seconds(60))
            group.cancelAll()
            try await group.waitForAll()
        }
        let evaluations = try env.database.ruleEvaluations()
        #expect(evaluations.map(\.rule) == ["restoration_error_rate"])
        #expect(evaluations.first?.lastEval == Payloads.time("2026-11-01", hour: 12))
        #expect(try env.database.alertStates().map(\.status) == [.firing])
    }
}
