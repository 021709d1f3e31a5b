import LifelineAlertState

/// ``AlertStateStore`` over a SQLite ``Database``: each call runs on a store thread
/// (``Database/onStoreThread(_:)``), never on the cooperative pool.
package struct SQLiteAlertStateStore: AlertStateStore {
    package let database: Database

    package init(database: Database) {
        self.database = database
    }

    package func alertStates() async throws -> [AlertStateRecord] {
        try await database.onStoreThread { try $0.alertStates() }
    }

    package func recordEvaluation(
        _ evaluation: RuleEvaluationRecord, upserts: [AlertStateRecord], deletions: [String],
        transitions: [AlertTransition], outbox: [OutboxMessage]
    ) async throws {
        try await database.onStoreThread {
            try $0.recordEvaluation(
                evaluation, upserts: upserts, deletions: deletions, transitions: transitions, outbox: outbox)
        }
    }

    package func pendingOutbox(limit: Int) async throws -> [OutboxMessage] {
        try await database.onStoreThread { try $0.pendingOutbox(limit: limit) }
    }

    package func finishOutbox(ids: [Int64], failed: Bool, at: Int64) async throws {
        try await database.onStoreThread { try $0.finishOutbox(ids: ids, failed: failed, at: at) }
    }

    package func ruleEvaluations() async throws -> [RuleEvaluationRecord] {
        try await database.onStoreThread { try $0.ruleEvaluations() }
    }

    package func alertHistory(since: Int64, limit: Int) async throws -> [AlertTransition] {
        try await database.onStoreThread { try $0.alertHistory(since: since, limit: limit) }
    }

    package func forgetAlertRules(except rules: Set<String>) async throws {
        try await database.onStoreThread { try $0.forgetAlertRules(except: rules) }
    }

    package func pruneAlerts(resolvedBefore: Int64, historyBefore: Int64) async throws {
        try await database.onStoreThread {
            try $0.pruneAlerts(resolvedBefore: resolvedBefore, historyBefore: historyBefore)
        }
    }
}

extension Database {
    /// This database as the alert evaluator's state store.
    package var alertState: SQLiteAlertStateStore { SQLiteAlertStateStore(database: self) }
}
