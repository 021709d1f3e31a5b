import LifelineAlertState
import LifelineAnalysis
import LifelineModel
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// Evaluates every alert rule at an interval and keeps the state of every alert (one per rule and
/// label set) with Prometheus semantics: *pending* while the condition has held for less than the
/// rule's `for`, *firing* after, still firing for `keep_firing_for` after the condition stopped,
/// then *resolved*. State, history and the last evaluation of each rule are stored through an
/// ``AlertStateStore``, so a restart neither re-fires nor forgets. Figures come from an
/// ``AnalysisRunner``: every store call runs on the store's threads, not in this actor.
///
/// Time is injected (``AlertClock``); ``evaluate(at:)`` evaluates once at an explicit time.
/// As a `Service`, ``run()`` evaluates every `evaluation_interval` until graceful shutdown, runs
/// the notification queues, and (optionally) reloads the rule file on SIGHUP.
package actor AlertEvaluator: Service {
    /// How the evaluator runs.
    package struct Options: Sendable {
        /// Reload the rule file on SIGHUP (``run()`` only).
        package var reloadOnHangup = false
        /// Resolved alerts stay listed this long (seconds).
        package var resolvedRetention: Int64 = 86_400
        /// State changes are kept this long (seconds).
        package var historyRetention: Int64 = 30 * 86_400
        /// With several nodes on one store: ``run()`` evaluates and notifies only while this says
        /// the node leads; the others read alerts from the store, so each alert is announced once.
        /// `nil`: this process is the only one.
        package var leader: (@Sendable () -> Bool)?

        package init(reloadOnHangup: Bool = false, leader: (@Sendable () -> Bool)? = nil) {
            self.reloadOnHangup = reloadOnHangup
            self.leader = leader
        }
    }

    private let analysis: AnalysisRunner
    let store: any AlertStateStore
    let clock: any AlertClock
    private let options: Options
    let logger: Logger
    /// The notification queues.
    package nonisolated let notifications: NotificationDispatcher

    var rules: RuleSet
    let rulesPath: String?
    var loadedAt: Int64
    /// Alert states by rule, then fingerprint; `nil` until read from the store.
    var states: [String: [String: AlertStateRecord]]?
    var evaluations: [String: RuleEvaluationRecord] = [:]
    var evaluationCounts: [String: EvaluationCount] = [:]
    private var lastPrune: Int64?
    /// Outbox rows queued for delivery by this process and not finished yet (this process's
    /// queues, whoever leads: kept across changes of leader).
    var outboxInFlight: Set<Int64> = []
    /// Outbox rows this process delivered (or gave up on) whose mark the store has not taken yet:
    /// marked again each round, never sent again by this process.
    var outboxUnrecorded: [Int64: Bool] = [:]
    /// Outbox rows marked finished in the store since the last read of the pending rows began: a
    /// read that was already under way (the actor is reentrant) may still list them as pending.
    var outboxRecentlyFinished: Set<Int64> = []
    /// Whether the dispatcher reports finished outbox rows to this evaluator yet.
    var outboxHandlerSet = false

    /// - Parameters:
    ///   - rules: the rules to start with (see ``RuleFileLoader``).
    ///   - rulesPath: the file ``reload()`` reads; `nil` when the rules came from elsewhere.
    package init(
        analysis: AnalysisRunner, store: any AlertStateStore, rules: RuleSet, rulesPath: String? = nil,
        clock: any AlertClock = SystemAlertClock(), sender: any NotificationSender = HTTPNotificationSender(),
        options: Options = Options(), logger: Logger = Logger(label: "lifeline.alerts")
    ) {
        self.analysis = analysis
        self.store = store
        self.rules = rules
        self.rulesPath = rulesPath
        self.clock = clock
        self.options = options
        self.logger = logger
        self.loadedAt = clock.now()
        self.notifications = NotificationDispatcher(receivers: rules.receivers, sender: sender, logger: logger)
    }

    // MARK: Service

    package func run() async throws {
        let notifications = self.notifications
        let reloadOnHangup = options.reloadOnHangup
        let gated = options.leader != nil
        await withDiscardingTaskGroup { group in
            group.addTask { await notifications.run() }
            if reloadOnHangup {
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) {
                        do {
                            _ = try await self.reload()
                        } catch {
                            self.logger.error("rule reload on SIGHUP refused", metadata: ["errors": "\(error)"])
                        }
                    }
                }
            }
            try? await cancelWhenGracefulShutdown {
                // With a leader gate, starting counts as coming from follower: the cache is not
                // trusted until this node reads the store as leader.
                var followed = gated
                while !Task.isCancelled {
                    if await self.isFollower {
                        // Another node evaluates; look again soon, so a takeover is quick.
                        await self.forgetCachedState()
                        followed = true
                        try await self.clock.sleep(for: .seconds(1))
                        continue
                    }
                    if followed {
                        // Taking the lead: read the state the last leader stored (whatever a
                        // snapshot cached may be older), and this node's rules decide from now on.
                        followed = false
                        await self.forgetCachedState()
                        await self.forgetRemovedRules()
                    }
                    let interval = await self.evaluateNow()
                    try await self.clock.sleep(for: .seconds(interval))
                }
            }
            group.cancelAll()
        }
        notifications.finish()
        logger.debug("alert evaluator stopped")
    }

    /// Forgets, in the store, the state of rules not in the current set.
    func forgetRemovedRules() async {
        do {
            try await store.forgetAlertRules(except: Set(rules.rules.map(\.name)))
        } catch {
            logger.error("cannot forget the state of removed rules", metadata: ["error": "\(error)"])
        }
    }

    /// Whether another node leads (``Options/leader``).
    var isFollower: Bool { options.leader.map { !$0() } ?? false }

    /// Drops what this node remembers of the store's alert state: a follower reads it again from
    /// the store, where the leader writes it, and so does this node if it becomes leader.
    func forgetCachedState() {
        states = nil
        evaluations = [:]
        lastPrune = nil
    }

    /// Evaluates at the clock's time; returns the interval to wait.
    private func evaluateNow() async -> Int64 {
        await evaluate(at: clock.now())
        return rules.evaluationInterval
    }

    // MARK: Evaluation

    /// Evaluates every rule at `now` (epoch seconds), stores the outcome and queues notifications.
    /// Returns the evaluation record of every rule.
    @discardableResult
    package func evaluate(at now: Int64) async -> [RuleEvaluationRecord] {
        await loadStatesIfNeeded()
        guard states != nil else {
            // Without the stored state an evaluation could re-fire everything: wait for the store.
            return []
        }
        var records: [RuleEvaluationRecord] = []
        var notices: [AlertNotice] = []
        for rule in rules.rules {
            let (record, ruleNotices) = await evaluate(rule, at: now)
            evaluationCounts[rule.name, default: EvaluationCount()].total += 1
            if record.error != nil { evaluationCounts[rule.name, default: EvaluationCount()].failed += 1 }
            records.append(record)
            notices += ruleNotices
        }
        await route(notices)
        await deliverOutbox()
        if lastPrune.map({ now - $0 >= 3600 || now < $0 }) ?? true {
            lastPrune = now
            do {
                try await store.pruneAlerts(
                    resolvedBefore: now - options.resolvedRetention, historyBefore: now - options.historyRetention)
                for (rule, alerts) in states ?? [:] {
                    states?[rule] = alerts.filter {
                        $0.value.status != .resolved || ($0.value.resolvedAt ?? now) >= now - options.resolvedRetention
                    }
                }
            } catch {
                logger.error("cannot prune alert state", metadata: ["error": "\(error)"])
            }
        }
        return records
    }

    /// A group of one rule whose condition holds.
    private struct Candidate {
        var labels: [String: String]
        var value: Double
        var samples: Int64
    }

    private func evaluate(_ rule: AlertRule, at now: Int64) async -> (RuleEvaluationRecord, [AlertNotice]) {
        let started = ContinuousClock.now
        let day = UTCDay(epochSeconds: now)
        var candidates: [String: Candidate] = [:]
        var evaluated = 0
        var thin = 0
        var maximum: Double?
        var failure: String?
        do {
            // One read transaction per rule, on the store's threads; a rule over the rollups alone
            // does not wait for the explorer's held rows.
            let values = try await ReadFreshness.$readsExplorer.withValue(rule.measure.readsExplorer) {
                try await analysis.analyze { analyzer in
                    var apps: [String]
                    if let app = rule.app { apps = [app] } else { apps = try await analyzer.apps().map(\.bundleID) }
                    var values: [(String, [MeasureValue])] = []
                    for app in apps {
                        values.append((app, try await analyzer.evaluate(rule.measure, rule.scope(app: app, day: day))))
                    }
                    return values
                }
            }
            for (app, appValues) in values {
                for value in appValues {
                    guard let number = value.value, number.isFinite else { continue }
                    guard value.samples >= rule.minSamples else {
                        thin += 1
                        continue
                    }
                    evaluated += 1
                    maximum = max(maximum ?? number, number)
                    guard rule.op.holds(number, rule.threshold) else { continue }
                    var labels = value.key.labels.merging(value.labels) { a, _ in a }
                    labels.merge(rule.labels) { _, b in b }
                    labels["app"] = app
                    labels["alertname"] = rule.name
                    candidates[LabelFingerprint.of(labels)] = Candidate(
                        labels: labels, value: number, samples: value.samples)
                }
            }
        } catch {
            failure = "\(error)"
        }
        // The figures were read on the store's threads, so the actor may have reloaded the rules
        // meanwhile: a rule removed by that reload leaves no state behind.
        guard rules.rules.contains(where: { $0.name == rule.name }) else {
            let record = RuleEvaluationRecord(
                rule: rule.name, lastEval: now, durationMilliseconds: 0, valueSummary: nil,
                error: "removed by a rule reload during its evaluation")
            return (record, [])
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var summary = "\(evaluated) group\(evaluated == 1 ? "" : "s")"
        if thin > 0 { summary += ", \(thin) skipped under min_samples" }
        summary += ", \(candidates.count) over threshold"
        if let maximum { summary += ", max \(AnnotationTemplate.plainNumber(maximum))" }
        var record = RuleEvaluationRecord(
            rule: rule.name, lastEval: now, durationMilliseconds: milliseconds,
            valueSummary: failure == nil ? summary : nil, error: failure)
        if let failure {
            // Keep every alert as it is: a failing query says nothing about the condition.
            logger.error("rule evaluation failed", metadata: ["rule": "\(rule.name)", "error": "\(failure)"])
            await persist(record, upserts: [], deletions: [], transitions: [], outbox: [])
            evaluations[rule.name] = record
            return (record, [])
        }
        var current = states?[rule.name] ?? [:]
        var upserts: [AlertStateRecord] = []
        var deletions: [String] = []
        var transitions: [AlertTransition] = []
        var notices: [AlertNotice] = []
        func transition(_ alert: AlertStateRecord, from: AlertStateRecord.Status) {
            transitions.append(
                AlertTransition(
                    rule: rule.name, fingerprint: alert.fingerprint, labels: alert.labels, from: from,
                    to: alert.status, at: now, value: alert.lastValue))
        }
        for (fingerprint, candidate) in candidates {
            let annotations = rule.annotations.mapValues {
                $0.render(
                    .init(
                        value: candidate.value, threshold: rule.threshold, samples: candidate.samples,
                        labels: candidate.labels))
            }
            if var alert = current[fingerprint], alert.status != .resolved {
                let before = alert.status
                alert.lastActive = now
                alert.lastEval = now
                alert.lastValue = candidate.value
                alert.lastSamples = candidate.samples
                alert.annotations = annotations
                if alert.status == .pending, now - alert.activeSince >= rule.forSeconds {
                    alert.status = .firing
                    alert.firedAt = now
                }
                if alert.status != before { transition(alert, from: before) }
                current[fingerprint] = alert
                upserts.append(alert)
            } else {
                let before = current[fingerprint]?.status ?? .inactive
                var alert = AlertStateRecord(
                    rule: rule.name, fingerprint: fingerprint, labels: candidate.labels, annotations: annotations,
                    status: .pending, activeSince: now, lastActive: now, lastValue: candidate.value,
                    lastSamples: candidate.samples, lastEval: now)
                transition(alert, from: before)
                if rule.forSeconds == 0 {
                    alert.status = .firing
                    alert.firedAt = now
                    transition(alert, from: .pending)
                }
                current[fingerprint] = alert
                upserts.append(alert)
            }
        }
        for (fingerprint, var alert) in current where candidates[fingerprint] == nil {
            switch alert.status {
            case .pending:
                current[fingerprint] = nil
                deletions.append(fingerprint)
                alert.status = .inactive
                transition(alert, from: .pending)
            case .firing:
                alert.lastEval = now
                if now - alert.lastActive >= rule.keepFiringForSeconds {
                    alert.status = .resolved
                    alert.resolvedAt = now
                    transition(alert, from: .firing)
                }
                current[fingerprint] = alert
                upserts.append(alert)
            case .resolved, .inactive:
                break
            }
        }
        // Notices: every change to firing or resolved; firing alerts again for Alertmanager.
        let changed = Set(transitions.filter { $0.to == .firing || $0.to == .resolved }.map(\.fingerprint))
        for alert in current.values where alert.status == .firing || changed.contains(alert.fingerprint) {
            guard alert.status == .firing || alert.status == .resolved, let firedAt = alert.firedAt else { continue }
            let firing = alert.status == .firing
            notices.append(
                AlertNotice(
                    rule: rule.name, fingerprint: alert.fingerprint, status: firing ? .firing : .resolved,
                    labels: alert.labels, annotations: alert.annotations, startsAt: firedAt,
                    endsAt: firing ? now + 4 * max(rules.evaluationInterval, 60) : alert.resolvedAt,
                    value: alert.lastValue,
                    generatorURL: rules.externalURL.map { "\($0)/v1/rules#\(rule.name)" },
                    isChange: changed.contains(alert.fingerprint)))
        }
        states?[rule.name] = current
        let outbox = outboxMessages(notices.filter(\.isChange), at: now)
        if !(await persist(record, upserts: upserts, deletions: deletions, transitions: transitions, outbox: outbox)) {
            record.error = "alert state could not be stored"
        }
        evaluations[rule.name] = record
        return (record, notices.sorted { $0.fingerprint < $1.fingerprint })
    }

    @discardableResult
    private func persist(
        _ record: RuleEvaluationRecord, upserts: [AlertStateRecord], deletions: [String],
        transitions: [AlertTransition], outbox: [OutboxMessage]
    ) async -> Bool {
        do {
            try await store.recordEvaluation(
                record, upserts: upserts, deletions: deletions, transitions: transitions, outbox: outbox)
            return true
        } catch {
            logger.error("cannot store alert state", metadata: ["rule": "\(record.rule)", "error": "\(error)"])
            return false
        }
    }
}
