import Foundation
import LifelineAlertState

/// Notifications through the durable outbox: a change (firing, resolved) becomes one outbox row
/// per receiver, written in the same transaction as the state change; the leader then delivers
/// pending rows in order and marks them finished. A leader killed between the commit and the
/// receiver's answer leaves the rows pending, and the next leader (or the next start) delivers
/// them, with the same ``AlertNotice/dedupKey``. Re-sends of firing alerts to Alertmanager are not
/// changes: they go straight to the queues, as Alertmanager expects them repeatedly.
extension AlertEvaluator {
    /// Rows read from the outbox per delivery round.
    static let outboxBatch = 1_000

    /// The outbox rows of the change `notices`: one per receiver each routes to (resolved ones only
    /// where `send_resolved`).
    func outboxMessages(_ notices: [AlertNotice], at now: Int64) -> [OutboxMessage] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var messages: [OutboxMessage] = []
        for notice in notices {
            guard let body = try? encoder.encode(notice) else { continue }
            for receiver in rules.receivers(for: notice.labels) {
                if notice.status == .resolved, !receiver.sendResolved { continue }
                messages.append(
                    OutboxMessage(
                        receiver: receiver.name, dedupKey: notice.dedupKey, body: String(decoding: body, as: UTF8.self),
                        createdAt: now))
            }
        }
        return messages
    }

    /// Sends the re-sends of firing alerts to the Alertmanager receivers their labels route to.
    func route(_ notices: [AlertNotice]) async {
        var batches: [String: [AlertNotice]] = [:]
        for notice in notices where !notice.isChange {
            for receiver in rules.receivers(for: notice.labels) where receiver.kind == .alertmanager {
                batches[receiver.name, default: []].append(notice)
            }
        }
        for (receiver, batch) in batches.sorted(by: { $0.key < $1.key }) {
            await notifications.enqueue(batch, to: receiver)
        }
    }

    /// Queues the pending outbox rows not queued yet, one request per receiver and round, in id
    /// order. Rows of a receiver no longer configured are finished as failed (logged).
    func deliverOutbox() async {
        if !outboxHandlerSet {
            outboxHandlerSet = true
            notifications.onFinished { [weak self] ids, outcome in
                await self?.outboxFinished(ids, outcome)
            }
        }
        for failed in [false, true] {
            let ids = outboxUnrecorded.filter { $0.value == failed }.map(\.key)
            guard !ids.isEmpty else { continue }
            if (try? await store.finishOutbox(ids: ids, failed: failed, at: clock.now())) != nil {
                for id in ids { outboxUnrecorded[id] = nil }
            }
        }
        // Rows finished before this read begins are not in it; rows finished while it runs may
        // be (its snapshot can predate their commit): those are skipped below, never sent twice.
        let settled = outboxRecentlyFinished
        let pending: [OutboxMessage]
        do {
            pending = try await store.pendingOutbox(limit: Self.outboxBatch)
        } catch {
            logger.error("cannot read the alert outbox", metadata: ["error": "\(error)"])
            return
        }
        outboxRecentlyFinished.subtract(settled)
        let decoder = JSONDecoder()
        var batches: [String: (notices: [AlertNotice], ids: [Int64])] = [:]
        var orphans: [Int64] = []
        for message in pending
        where !outboxInFlight.contains(message.id) && outboxUnrecorded[message.id] == nil
            && !outboxRecentlyFinished.contains(message.id)
        {
            guard notifications.hasReceiver(message.receiver),
                let notice = try? decoder.decode(AlertNotice.self, from: Data(message.body.utf8))
            else {
                logger.error(
                    "alert notification dropped: its receiver is no longer configured",
                    metadata: ["receiver": "\(message.receiver)", "dedup_key": "\(message.dedupKey)"])
                orphans.append(message.id)
                continue
            }
            batches[message.receiver, default: ([], [])].notices.append(notice)
            batches[message.receiver, default: ([], [])].ids.append(message.id)
            outboxInFlight.insert(message.id)
        }
        if !orphans.isEmpty { await outboxFinished(orphans, .failed) }
        for (receiver, batch) in batches.sorted(by: { $0.key < $1.key }) {
            await notifications.enqueue(batch.notices, to: receiver, outbox: batch.ids)
        }
    }

    /// Records how a request carrying outbox rows ended: delivered or given up (finished), or
    /// dropped unsent (left pending: the next round queues it again).
    func outboxFinished(_ ids: [Int64], _ outcome: DeliveryOutcome) async {
        // Still in flight until the store says finished: an evaluation running while this waits
        // (the actor is reentrant) must not read the rows as pending and queue them again.
        defer { outboxInFlight.subtract(ids) }
        guard outcome != .dropped else { return }
        do {
            try await store.finishOutbox(ids: ids, failed: outcome == .failed, at: clock.now())
            outboxRecentlyFinished.formUnion(ids)
        } catch {
            // Marked at the next round; this process does not send them again (another leader
            // might, with the same dedup key).
            logger.error("cannot mark alert notifications delivered", metadata: ["error": "\(error)"])
            for id in ids { outboxUnrecorded[id] = outcome == .failed }
        }
    }
}
