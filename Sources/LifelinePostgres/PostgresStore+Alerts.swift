import LifelineAlertState
import PostgresNIO

/// The alert evaluator's state on PostgreSQL (migration `0003_alerts`): written by the leader
/// only, read by every node, so a new leader carries on from the state the last one committed
/// (an alert already firing is not announced again).
extension PostgresStore: AlertStateStore {
    package func alertStates() async throws -> [AlertStateRecord] {
        var records: [AlertStateRecord] = []
        let rows = try await client.query(
            """
            SELECT rule, fingerprint, labels, annotations, state, active_since, fired_at, resolved_at,
                   last_active, last_value, last_samples, last_eval
            FROM alert_state ORDER BY rule, fingerprint
            """, logger: logger)
        for try await row in rows.decode(
            (
                String, String, String, String, String, Int64, Int64?, Int64?, Int64, Double?, Int64, Int64
            ).self)
        {
            guard let status = AlertStateRecord.Status(rawValue: row.4) else {
                throw PostgresStoreError("unknown state \(row.4) in alert_state")
            }
            records.append(
                AlertStateRecord(
                    rule: row.0, fingerprint: row.1, labels: LabelsJSON.decode(row.2),
                    annotations: LabelsJSON.decode(row.3), status: status, activeSince: row.5, firedAt: row.6,
                    resolvedAt: row.7, lastActive: row.8, lastValue: row.9, lastSamples: row.10, lastEval: row.11))
        }
        return records
    }

    package func recordEvaluation(
        _ evaluation: RuleEvaluationRecord, upserts: [AlertStateRecord], deletions: [String],
        transitions: [AlertTransition], outbox: [OutboxMessage]
    ) async throws {
        try await client.withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                for state in upserts {
                    let (labels, annotations) = (LabelsJSON.encode(state.labels), LabelsJSON.encode(state.annotations))
                    try await connection.query(
                        """
                        INSERT INTO alert_state (rule, fingerprint, labels, annotations, state, active_since, fired_at,
                                                 resolved_at, last_active, last_value, last_samples, last_eval)
                        VALUES (\(state.rule), \(state.fingerprint), \(labels), \(annotations),
                                \(state.status.rawValue), \(state.activeSince), \(state.firedAt), \(state.resolvedAt),
                                \(state.lastActive), \(state.lastValue), \(state.lastSamples), \(state.lastEval))
                        ON CONFLICT (rule, fingerprint) DO UPDATE SET
                            labels = excluded.labels, annotations = excluded.annotations, state = excluded.state,
                            active_since = excluded.active_since, fired_at = excluded.fired_at,
                            resolved_at = excluded.resolved_at, last_active = excluded.last_active,
                            last_value = excluded.last_value, last_samples = excluded.last_samples,
                            last_eval = excluded.last_eval
                        """, logger: logger)
                }
                if !deletions.isEmpty {
                    try await connection.query(
                        "DELETE FROM alert_state WHERE rule = \(evaluation.rule) AND fingerprint = ANY(\(deletions))",
                        logger: logger)
                }
                for transition in transitions {
                    let labels = LabelsJSON.encode(transition.labels)
                    try await connection.query(
                        """
                        INSERT INTO alert_history (rule, fingerprint, labels, from_state, to_state, at, value)
                        VALUES (\(transition.rule), \(transition.fingerprint), \(labels), \(transition.from.rawValue),
                                \(transition.to.rawValue), \(transition.at), \(transition.value))
                        """, logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO rule_evaluations (rule, last_eval, duration_ms, value_summary, error)
                    VALUES (\(evaluation.rule), \(evaluation.lastEval), \(evaluation.durationMilliseconds),
                            \(evaluation.valueSummary), \(evaluation.error))
                    ON CONFLICT (rule) DO UPDATE SET
                        last_eval = excluded.last_eval, duration_ms = excluded.duration_ms,
                        value_summary = excluded.value_summary, error = excluded.error
                    """, logger: logger)
                for message in outbox {
                    try await connection.query(
                        """
                        INSERT INTO alert_outbox (receiver, dedup_key, body, created_at)
                        VALUES (\(message.receiver), \(message.dedupKey), \(message.body), \(message.createdAt))
                        ON CONFLICT (receiver, dedup_key) DO NOTHING
                        """, logger: logger)
                }
            }
        }
    }

    package func pendingOutbox(limit: Int) async throws -> [OutboxMessage] {
        var messages: [OutboxMessage] = []
        let count = Int64(max(0, limit))
        let rows = try await client.query(
            """
            SELECT id, receiver, dedup_key, body, created_at FROM alert_outbox
            WHERE finished_at IS NULL ORDER BY id LIMIT \(count)
            """, logger: logger)
        for try await (id, receiver, key, body, created) in rows.decode((Int64, String, String, String, Int64).self) {
            messages.append(OutboxMessage(id: id, receiver: receiver, dedupKey: key, body: body, createdAt: created))
        }
        return messages
    }

    package func finishOutbox(ids: [Int64], failed: Bool, at: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await client.query(
            """
            UPDATE alert_outbox SET finished_at = \(at), failed = \(failed)
            WHERE id = ANY(\(ids)) AND finished_at IS NULL
            """, logger: logger)
    }

    package func ruleEvaluations() async throws -> [RuleEvaluationRecord] {
        var records: [RuleEvaluationRecord] = []
        let rows = try await client.query(
            "SELECT rule, last_eval, duration_ms, value_summary, error FROM rule_evaluations ORDER BY rule",
            logger: logger)
        for try await (rule, lastEval, duration, summary, error) in rows.decode(
            (String, Int64, Double, String?, String?).self)
        {
            records.append(
                RuleEvaluationRecord(
                    rule: rule, lastEval: lastEval, durationMilliseconds: duration, valueSummary: summary, error: error)
            )
        }
        return records
    }

    package func alertHistory(since: Int64, limit: Int) async throws -> [AlertTransition] {
        var transitions: [AlertTransition] = []
        let count = Int64(max(0, limit))
        let rows = try await client.query(
            """
            SELECT rule, fingerprint, labels, from_state, to_state, at, value FROM alert_history
            WHERE at >= \(since) ORDER BY at DESC, id DESC LIMIT \(count)
            """, logger: logger)
        for try await (rule, fingerprint, labels, fromState, toState, at, value) in rows.decode(
            (String, String, String, String, String, Int64, Double?).self)
        {
            guard let from = AlertStateRecord.Status(rawValue: fromState),
                let to = AlertStateRecord.Status(rawValue: toState)
            else { throw PostgresStoreError("unknown state in alert_history") }
            transitions.append(
                AlertTransition(
                    rule: rule, fingerprint: fingerprint, labels: LabelsJSON.decode(labels), from: from, to: to,
                    at: at, value: value))
        }
        return transitions
    }

    package func forgetAlertRules(except rules: Set<String>) async throws {
        let names = Array(rules).sorted()
        try await client.withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "DELETE FROM alert_state WHERE NOT (rule = ANY(\(names)))", logger: logger)
                try await connection.query(
                    "DELETE FROM rule_evaluations WHERE NOT (rule = ANY(\(names)))", logger: logger)
            }
        }
    }

    package func pruneAlerts(resolvedBefore: Int64, historyBefore: Int64) async throws {
        try await client.withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "DELETE FROM alert_state WHERE state = 'resolved' AND resolved_at < \(resolvedBefore)",
                    logger: logger)
                try await connection.query("DELETE FROM alert_history WHERE at < \(historyBefore)", logger: logger)
                try await connection.query(
                    "DELETE FROM alert_outbox WHERE finished_at < \(historyBefore)", logger: logger)
            }
        }
    }
}
