import Foundation
import Hummingbird
import HummingbirdTesting
import LifelineAlerts
import LifelineAnalysis
import LifelineSQLite
import LifelineTestSupport
import Synchronization
import Testing

@Suite("Evaluating rules against the store, with state in SQLite or PostgreSQL and notifications to real receivers")
struct AlertEvaluatorTests {
    static let day = "2026-11-01"

    /// Rules pointing at a receiver on `port`: restoration error rate over 1 % held for 2 h.
    static func rules(port: Int, forDuration: String = "2h", threshold: String = "0.01") -> String {
        """
        evaluation_interval: 60s
        external_url: http://lifeline.test
        groups:
          - name: restoration
            rules:
              - name: restoration_error_rate
                query: restoration_error_rate
                op: ">"
                threshold: \(threshold)
                window: 1d
                group_by: [version]
                for: \(forDuration)
                min_samples: 50
                labels: {severity: page}
                annotations:
                  summary: "Restoration error rate {{ $value | percent }} on {{ $labels.version }}"
        receivers:
          - name: hook
            webhook: {url: "http://127.0.0.1:\(port)/hook"}
            initial_backoff: 10ms
          - name: am
            alertmanager: {url: "http://127.0.0.1:\(port)/am"}
            initial_backoff: 10ms
        route:
          receiver: hook
          routes:
            - match: {severity: page}
              receiver: am
              continue: true
            - receiver: hook
        """
    }

    private func makeEvaluator(
        _ env: TemporaryDatabase, path: String, clock: ManualClock
    ) throws -> AlertEvaluator {
        AlertEvaluator(
            analysis: AnalysisRunner(source: env.database), store: env.database.alertState,
            rules: try RuleFileLoader.load(path: path), rulesPath: path, clock: clock, logger: .quiet)
    }

    private func makeEvaluator(
        _ env: TestStore, path: String, clock: ManualClock, options: AlertEvaluator.Options = .init()
    ) throws -> AlertEvaluator {
        AlertEvaluator(
            analysis: AnalysisRunner(source: env.source), store: env.alertState,
            rules: try RuleFileLoader.load(path: path), rulesPath: path, clock: clock, options: options,
            logger: .quiet)
    }

    private struct Webhook: Decodable {
        struct Alert: Decodable {
            var status: String
            var labels: [String: String]
            var annotations: [String: String]
            var startsAt: String
            var endsAt: String?
        }
        var status: String
        var receiver: String
        var alerts: [Alert]
    }

    private struct AlertmanagerAlert: Decodable {
        var labels: [String: String]
        var annotations: [String: String]
        var startsAt: String
        var endsAt: String?
        var generatorURL: String?
    }

    @Test(
        "an alert goes pending, fires after `for`, survives a restart without re-firing, and resolves",
        arguments: Backend.allCases)
    func lifecycle(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        try await env.ingest([
            Payloads.metric(day: Self.day, version: "4.2.0", attempts: 100, failures: 5),
            Payloads.metric(day: Self.day, version: "4.2.0", attempts: 100, failures: 3, device: "iPhone14,7"),
            Payloads.metric(day: Self.day, version: "4.1.0", attempts: 400, failures: 0),
        ])
        let received = ReceivedRequests()
        let receiver = RecordingReceiver.application(received)
        try await receiver.test(.live) { client in
            let port = try #require(client.port)
            let path = try env.write("rules.yaml", Self.rules(port: port))
            let clock = ManualClock(Payloads.time(Self.day, hour: 10))
            var evaluator = try makeEvaluator(env, path: path, clock: clock)

            // 10:00 the condition holds: pending, nothing sent.
            await evaluator.evaluate(at: clock.now())
            await evaluator.notifications.deliverQueued()
            var snapshot = await evaluator.snapshot()
            #expect(snapshot.alerts.map(\.status) == [.pending])
            #expect(snapshot.alerts.first?.labels["version"] == "4.2.0")
            #expect(received.all.isEmpty)

            // 11:59 still pending: `for` is 2 h.
            clock.advance(seconds: 7140)
            await evaluator.evaluate(at: clock.now())
            await evaluator.notifications.deliverQueued()
            #expect(await evaluator.snapshot().alerts.map(\.status) == [.pending])
            #expect(received.all.isEmpty)

            // 12:00: firing; both receivers are told.
            clock.advance(seconds: 60)
            await evaluator.evaluate(at: clock.now())
            await evaluator.notifications.deliverQueued()
            snapshot = await evaluator.snapshot()
            #expect(snapshot.alerts.map(\.status) == [.firing])
            let hooks = try received.bodies(path: "/hook").map { try JSONDecoder().decode(Webhook.self, from: $0) }
            #expect(hooks.count == 1)
            #expect(hooks.first?.status == "firing")
            let firing = try #require(hooks.first?.alerts.first)
            #expect(firing.labels["alertname"] == "restoration_error_rate")
            #expect(firing.labels["app"] == Payloads.app)
            #expect(firing.annotations["summary"] == "Restoration error rate 4% on 4.2.0")
            #expect(firing.startsAt == "2026-11-01T12:00:00Z")
            let managers = try received.bodies(path: "/am/api/v2/alerts").map {
                try JSONDecoder().decode([AlertmanagerAlert].self, from: $0)
            }
            #expect(managers.count == 1)
            #expect(managers.first?.first?.labels["severity"] == "page")
            #expect(managers.first?.first?.generatorURL == "http://lifeline.test/v1/rules#restoration_error_rate")

            // Restart: a new evaluator on the same file keeps the alert firing and tells the
            // webhook nothing new (Alertmanager gets its periodic re-send).
            evaluator = try makeEvaluator(env, path: path, clock: clock)
            clock.advance(seconds: 60)
            await evaluator.evaluate(at: clock.now())
            await evaluator.notifications.deliverQueued()
            snapshot = await evaluator.snapshot()
            #expect(snapshot.alerts.map(\.status) == [.firing])
            #expect(snapshot.alerts.first?.firedAt == Payloads.time(Self.day, hour: 12))
            #expect(received.bodies(path: "/hook").count == 1)
            #expect(received.bodies(path: "/am/api/v2/alerts").count == 2)

            // Next day, no data in the 1-day window: resolved, and both receivers hear it.
            clock.set(Payloads.time("2026-11-02", hour: 1))
            await evaluator.evaluate(at: clock.now())
            await evaluator.notifications.deliverQueued()
            snapshot = await evaluator.snapshot()
            #expect(snapshot.alerts.map(\.status) == [.resolved])
            let resolvedHooks = try received.bodies(path: "/hook").map {
                try JSONDecoder().decode(Webhook.self, from: $0)
            }
            #expect(resolvedHooks.map(\.status) == ["firing", "resolved"])
            #expect(resolvedHooks.last?.alerts.first?.endsAt == "2026-11-02T01:00:00Z")
            let lastManager = try JSONDecoder().decode(
                [AlertmanagerAlert].self, from: try #require(received.bodies(path: "/am/api/v2/alerts").last))
            #expect(lastManager.first?.endsAt == "2026-11-02T01:00:00Z")

            let history = try await env.alertState.alertHistory(since: 0, limit: 10).reversed().map {
                "\($0.from.rawValue)->\($0.to.rawValue)"
            }
            #expect(history == ["inactive->pending", "pending->firing", "firing->resolved"])
            #expect(snapshot.evaluations["restoration_error_rate"]?.error == nil)
        }
        await env.remove()
    }

    @Test(
        "the minimum-sample guard skips thin groups, and keep_firing_for holds a firing alert",
        arguments: Backend.allCases)
    func guardAndKeepFiring(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        // 4.3.0 has only 20 attempts: under min_samples 50, never an alert despite 50 % failures.
        try await env.ingest([
            Payloads.metric(day: Self.day, version: "4.2.0", attempts: 100, failures: 5),
            Payloads.metric(day: Self.day, version: "4.3.0", attempts: 20, failures: 10),
        ])
        var text = Self.rules(port: 9, forDuration: "0s")
        text = text.replacingOccurrences(of: "min_samples: 50", with: "min_samples: 50\n        keep_firing_for: 2h")
        let path = try env.write("rules.yaml", text)
        let clock = ManualClock(Payloads.time(Self.day, hour: 23))
        let evaluator = try makeEvaluator(env, path: path, clock: clock)
        await evaluator.evaluate(at: clock.now())
        var alerts = await evaluator.snapshot().alerts
        #expect(alerts.map(\.status) == [.firing])
        #expect(alerts.map { $0.labels["version"] } == ["4.2.0"])

        // 00:59 next day: no data, but the condition held less than 2 h ago.
        clock.set(Payloads.time("2026-11-02", hour: 0, minute: 59))
        await evaluator.evaluate(at: clock.now())
        alerts = await evaluator.snapshot().alerts
        #expect(alerts.map(\.status) == [.firing])

        clock.set(Payloads.time("2026-11-02", hour: 1))
        await evaluator.evaluate(at: clock.now())
        alerts = await evaluator.snapshot().alerts
        #expect(alerts.map(\.status) == [.resolved])
        await env.remove()
    }

    @Test(
        "a follower evaluates nothing and reads the leader's alerts from the store; as leader it does not announce them again",
        arguments: Backend.allCases)
    func followerAndTakeover(_ backend: Backend) async throws {
        guard let env = try await TestStore.make(backend) else { return }
        try await env.ingest([Payloads.metric(day: Self.day, attempts: 100, failures: 5)])
        let received = ReceivedRequests()
        try await RecordingReceiver.application(received).test(.live) { client in
            let port = try #require(client.port)
            let path = try env.write("rules.yaml", Self.rules(port: port, forDuration: "0s"))
            let clock = ManualClock(Payloads.time(Self.day, hour: 12))
            let leads = Mutex(false)
            let follower = try makeEvaluator(
                env, path: path, clock: clock, options: .init(leader: { leads.withLock { $0 } }))
            let leader = try makeEvaluator(env, path: path, clock: clock, options: .init(leader: { true }))
            // The leader fires; the follower (never evaluating) lists the alert from the store.
            await leader.evaluate(at: clock.now())
            await leader.notifications.deliverQueued()
            #expect(received.bodies(path: "/hook").count == 1)
            #expect(await follower.snapshot().alerts.map(\.status) == [.firing])
            // A follower loading other rules (a new rule file rolling out) leaves the leader's
            // state alone.
            await follower.apply(RuleSet())
            #expect(try await env.alertState.alertStates().count == 1)
            await follower.apply(try RuleFileLoader.load(path: path))
            // Takeover: the follower leads, its service loop evaluates from the stored state, and
            // the webhook hears nothing new (Alertmanager gets its periodic re-send).
            leads.withLock { $0 = true }
            clock.advance(seconds: 60)
            let loop = Task { try await follower.run() }
            for _ in 0..<200 where received.bodies(path: "/am/api/v2/alerts").count < 2 {
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(received.bodies(path: "/am/api/v2/alerts").count == 2)
            #expect(received.bodies(path: "/hook").count == 1)
            let alerts = await follower.snapshot().alerts
            #expect(alerts.map(\.status) == [.firing])
            #expect(alerts.first?.firedAt == Payloads.time(Self.day, hour: 12))
            loop.cancel()
            _ = await loop.result
        }
        await env.remove()
    }

    @Test("an invalid reload is refused with every error and the old rules keep running")
    func invalidReload() async throws {
        let env = try TemporaryDatabase()
        defer { env.remove() }
        try await env.ingest([Payloads.metric(day: Self.day, attempts: 100, failures: 5)])
        let path = try env.write("rules.yaml", Self.rules(port: 9, forDuration: "0s"))
        let clock = ManualClock(Payloads.time(Self.day, hour: 12))
        let evaluator = try makeEvaluator(env, path: path, clock: clock)
        await evaluator.evaluate(at: clock.now())

        _ = try env.write(
            "rules.yaml",
            Self.rules(port: 9).replacingOccurrences(of: "threshold: 0.01", with: "threshold: lots")
                .replacingOccurrences(of: "window: 1d", with: "window: 1x"))
        await #expect {
            try await evaluator.reload()
        } throws: { error in
            let lines = (error as? RuleFileError)?.problems.map(\.description) ?? []
            return lines.count == 2
                && lines[0] == #"rules.yaml:9: rule "restoration_error_rate": threshold must be a number"#
                && lines[1].hasPrefix(#"rules.yaml:10: rule "restoration_error_rate": window must be whole days"#)
        }
        let snapshot = await evaluator.snapshot()
        #expect(snapshot.rules.rules.map(\.name) == ["restoration_error_rate"])
        #expect(snapshot.rules.rules.first?.forSeconds == 0)
        clock.advance(seconds: 60)
        let records = await evaluator.evaluate(at: clock.now())
        #expect(records.map(\.rule) == ["restoration_error_rate"])
        #expect(await evaluator.snapshot().alerts.map(\.status) == [.firing])

        // A valid file is taken.
        _ = try env.write("rules.yaml", Self.rules(port: 9, threshold: "0.5"))
        let set = try await evaluator.reload()
        #expect(set.rules.first?.threshold == 0.5)
    }

    @Test("a failing receiver drops the oldest notifications when its queue is full and never blocks")
    func failingReceiver() async throws {
        struct Refusing: NotificationSender {
            func post(
                url: String, headers: [String: String], body: [UInt8], timeout: Duration
            ) async throws(NotificationError) {
                throw NotificationError("refused", isRetryable: true)
            }
        }
        var config = ReceiverConfig(name: "down", kind: .webhook, url: "http://127.0.0.1:9/")
        config.queueCapacity = 2
        config.maxAttempts = 3
        config.initialBackoff = .milliseconds(1)
        let dispatcher = NotificationDispatcher(receivers: [config], sender: Refusing(), logger: .quiet)
        let notice = AlertNotice(
            rule: "r", fingerprint: "f", status: .firing, labels: [:], annotations: [:], startsAt: 0, endsAt: nil,
            value: 1, generatorURL: nil, isChange: true)
        for _ in 0..<5 { await dispatcher.enqueue([notice], to: "down") }
        #expect(dispatcher.statistics["down"]?.dropped == 3)
        #expect(dispatcher.statistics["down"]?.queued == 2)
        await dispatcher.deliverQueued()
        let statistics = try #require(dispatcher.statistics["down"])
        #expect(statistics.failed == 2 && statistics.retries == 4 && statistics.sent == 0 && statistics.queued == 0)
    }
}
