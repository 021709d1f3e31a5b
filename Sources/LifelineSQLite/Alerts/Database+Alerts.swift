import Foundation
import LifelineAlertState
import LifelineStorage

/// The alert state of ``AlertStateStore``, on this object's connection (synchronous: see
/// ``SQLiteAlertStateStore`` for the async conformance that runs them on store threads).
extension Database {
    package func alertStates() throws(StoreError) -> [AlertStateRecord] {
        try withConnection { (connection) throws(StoreError) -> [AlertStateRecord] in
            try connection.query(
                """
                SELECT rule, fingerprint, labels, annotations, state, active_since, fired_at, resolved_at,
                       last_active, last_value, last_samples, last_eval
                FROM alert_state ORDER BY rule, fingerprint
                """
            ) { (row) throws(StoreError) -> AlertStateRecord in
                guard let status = AlertStateRecord.Status(rawValue: row.text(4)) else {
                    throw StoreError(.internal, "internal storage error", cause: "unknown state in alert_state")
                }
                return AlertStateRecord(
                    rule: row.text(0), fingerprint: row.text(1), labels: LabelsJSON.decode(row.text(2)),
                    annotations: LabelsJSON.decode(row.text(3)), status: status, activeSince: row.int64(5),
                    firedAt: row.optionalInt64(6), resolvedAt: row.optionalInt64(7), lastActive: row.int64(8),
                    lastValue: row.optionalDouble(9), lastSamples: row.int64(10), lastEval: row.int64(11))
            }
        }
    }

    package func recordEvaluation(
        _ evaluation: RuleEvaluationRecord, upserts: [AlertStateRecord], deletions: [String],
        transitions: [AlertTransition], outbox: [OutboxMessage] = []
    ) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                for state in upserts {
                    try connection.run(
                        """
                        INSERT INTO alert_state (rule, fingerprint, labels, annotations, state, active_since, fired_at,
                                                 resolved_at, last_active, last_value, last_samples, last_eval)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (rule, fingerprint) DO UPDATE SET
                            labels = excluded.labels, annotations = excluded.annotations, state = excluded.state,
                            active_since = excluded.active_since, fired_at = excluded.fired_at,
                            resolved_at = excluded.resolved_at, last_active = excluded.last_active,
                            last_value = excluded.last_value, last_samples = excluded.last_samples,
                            last_eval = excluded.last_eval
                        """,
                        [
                            .text(state.rule), .text(state.fingerprint), .text(LabelsJSON.encode(state.labels)),
                            .text(LabelsJSON.encode(state.annotations)), .text(state.status.rawValue),
                            .integer(state.activeSince), .integer(state.firedAt), .integer(state.resolvedAt),
                            .integer(state.lastActive), .real(state.lastValue), .integer(state.lastSamples),
                            .integer(state.lastEval),
                        ])
                }
                for fingerprint in deletions {
                    try connection.run(
                        "DELETE FROM alert_state WHERE rule = ? AND fingerprint = ?",
                        [.text(evaluation.rule), .text(fingerprint)])
                }
                for transition in transitions {
                    try connection.run(
                        """
                        INSERT INTO alert_history (rule, fingerprint, labels, from_state, to_state, at, value)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                        [
                            .text(transition.rule), .text(transition.fingerprint),
                            .text(LabelsJSON.encode(transition.labels)), .text(transition.from.rawValue),
                            .text(transition.to.rawValue), .integer(transition.at), .real(transition.value),
                        ])
                }
                try connection.run(
                    """
                    INSERT INTO rule_evaluations (rule, last_eval, duration_ms, value_summary, error)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (rule) DO UPDATE SET
                        last_eval = excluded.last_eval, duration_ms = excluded.duration_ms,
                        value_summary = excluded.value_summary, error = excluded.error
                    """,
                    [
                        .text(evaluation.rule), .integer(evaluation.lastEval),
                        .real(evaluation.durationMilliseconds), .text(evaluation.valueSummary),
                        .text(evaluation.error),
                    ])
                for message in outbox {
                    try connection.run(
                        """
                        INSERT INTO alert_outbox (receiver, dedup_key, body, created_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (receiver, dedup_key) DO NOTHING
                        """,
                        [
                            .text(message.receiver), .text(message.dedupKey), .text(message.body),
                            .integer(message.createdAt),
                        ])
                }
            }
        }
    }

    package func pendingOutbox(limit: Int) throws(StoreError) -> [OutboxMessage] {
        try withConnection { (connection) throws(StoreError) -> [OutboxMessage] in
            try connection.query(
                """
                SELECT id, receiver, dedup_key, body, created_at FROM alert_outbox
                WHERE finished_at IS NULL ORDER BY id LIMIT ?
                """, [.integer(Int64(max(0, limit)))]
            ) { (row) throws(StoreError) -> OutboxMessage in
                OutboxMessage(
                    id: row.int64(0), receiver: row.text(1), dedupKey: row.text(2), body: row.text(3),
                    createdAt: row.int64(4))
            }
        }
    }

    package func finishOutbox(ids: [Int64], failed: Bool, at: Int64) throws(StoreError) {
        guard !ids.isEmpty else { return }
        let list = try Self.encodeJSON(ids)
        _ = try withConnection { (connection) throws(StoreError) in
            try connection.run(
                """
                UPDATE alert_outbox SET finished_at = ?, failed = ?
                WHERE id IN (SELECT value FROM json_each(?)) AND finished_at IS NULL
                """, [.integer(at), .integer(failed ? 1 : 0), .text(list)])
        }
    }

    package func ruleEvaluations() throws(StoreError) -> [RuleEvaluationRecord] {
        try withConnection { (connection) throws(StoreError) -> [RuleEvaluationRecord] in
            try connection.query(
                "SELECT rule, last_eval, duration_ms, value_summary, error FROM rule_evaluations ORDER BY rule"
            ) { (row) throws(StoreError) -> RuleEvaluationRecord in
                RuleEvaluationRecord(
                    rule: row.text(0), lastEval: row.int64(1), durationMilliseconds: row.optionalDouble(2) ?? 0,
                    valueSummary: row.optionalText(3), error: row.optionalText(4))
            }
        }
    }

    package func alertHistory(since: Int64, limit: Int) throws(StoreError) -> [AlertTransition] {
        try withConnection { (connection) throws(StoreError) -> [AlertTransition] in
            try connection.query(
                """
                SELECT rule, fingerprint, labels, from_state, to_state, at, value FROM alert_history
                WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?
                """, [.integer(since), .integer(Int64(max(0, limit)))]
            ) { (row) throws(StoreError) -> AlertTransition in
                guard let from = AlertStateRecord.Status(rawValue: row.text(3)),
                    let to = AlertStateRecord.Status(rawValue: row.text(4))
                else {
                    throw StoreError(.internal, "internal storage error", cause: "unknown state in alert_history")
                }
                return AlertTransition(
                    rule: row.text(0), fingerprint: row.text(1), labels: LabelsJSON.decode(row.text(2)), from: from,
                    to: to, at: row.int64(5), value: row.optionalDouble(6))
            }
        }
    }

    package func forgetAlertRules(except rules: Set<String>) throws(StoreError) {
        let list = try Self.encodeJSON(Array(rules).sorted())
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.run(
                    "DELETE FROM alert_state WHERE rule NOT IN (SELECT value FROM json_each(?))", [.text(list)])
                try connection.run(
                    "DELETE FROM rule_evaluations WHERE rule NOT IN (SELECT value FROM json_each(?))", [.text(list)])
            }
        }
    }

    package func pruneAlerts(resolvedBefore: Int64, historyBefore: Int64) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.run(
                    "DELETE FROM alert_state WHERE state = 'resolved' AND resolved_at < ?", [.integer(resolvedBefore)])
                try connection.run("DELETE FROM alert_history WHERE at < ?", [.integer(historyBefore)])
                try connection.run(
                    "DELETE FROM alert_outbox WHERE finished_at < ?", [.integer(historyBefore)])
            }
        }
    }

    private static func encodeJSON(_ value: some Encodable) throws(StoreError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StoreError(.internal, "internal storage error", cause: "cannot encode JSON: \(error)")
        }
    }
}
