import Logging
import Synchronization

/// Hands notifications to one bounded queue per receiver and runs their delivery loops.
///
/// ``enqueue(_:to:)`` never waits, so evaluation (and ingest) go on whatever receivers do.
/// ``run()`` runs the loops until cancelled; without it (tests, `lifeline rules test`),
/// ``deliverQueued()`` delivers what is queued.
package final class NotificationDispatcher: Sendable {
    private let queues: Mutex<[String: ReceiverQueue]>
    private let sender: any NotificationSender
    private let finished: @Sendable ([Int64], DeliveryOutcome) async -> Void
    private let logger: Logger
    private let added: AsyncStream<ReceiverQueue>
    private let announce: AsyncStream<ReceiverQueue>.Continuation
    /// Told how each request carrying outbox rows ended (``onFinished(_:)``).
    private let finishedHandler = FinishedHandler()

    /// The handler behind a lock, shared with the queues. Inside a struct: a closure held by the
    /// lock as its value itself gained two reabstraction thunks at every read (``BatchObserver``).
    private final class FinishedHandler: Sendable {
        struct Handler {
            var body: (@Sendable ([Int64], DeliveryOutcome) async -> Void)?
        }

        let handler = Mutex(Handler())
    }

    package init(receivers: [ReceiverConfig], sender: any NotificationSender, logger: Logger) {
        self.sender = sender
        self.logger = logger
        (added, announce) = AsyncStream.makeStream()
        var queues: [String: ReceiverQueue] = [:]
        let handler = finishedHandler
        let finished: @Sendable ([Int64], DeliveryOutcome) async -> Void = { ids, outcome in
            await handler.handler.withLock { $0.body }?(ids, outcome)
        }
        self.finished = finished
        for receiver in receivers { queues[receiver.name] = ReceiverQueue(config: receiver, finished: finished) }
        self.queues = Mutex(queues)
        for queue in queues.values { announce.yield(queue) }
    }

    /// Adopts the receivers of a reloaded rule set: new ones get a queue, changed ones new
    /// settings, removed ones deliver what they hold and stop.
    package func configure(_ receivers: [ReceiverConfig]) {
        let (created, removed) = queues.withLock { queues -> ([ReceiverQueue], [ReceiverQueue]) in
            var created: [ReceiverQueue] = []
            for receiver in receivers {
                if let queue = queues[receiver.name] {
                    queue.update(receiver)
                } else {
                    let queue = ReceiverQueue(config: receiver, finished: finished)
                    queues[receiver.name] = queue
                    created.append(queue)
                }
            }
            let names = Set(receivers.map(\.name))
            let removed = queues.filter { !names.contains($0.key) }.map(\.value)
            for queue in removed { queues[queue.name] = nil }
            return (created, removed)
        }
        for queue in removed { queue.close() }
        for queue in created { announce.yield(queue) }
    }

    /// Sets what is told how each request carrying outbox rows ended (delivered, failed, dropped).
    package func onFinished(_ handler: @escaping @Sendable ([Int64], DeliveryOutcome) async -> Void) {
        finishedHandler.handler.withLock { $0.body = handler }
    }

    /// Whether a receiver of that name is configured.
    package func hasReceiver(_ name: String) -> Bool {
        queues.withLock { $0[name] != nil }
    }

    /// Queues `notices` (one request) for the receiver named `receiver`; `outbox`: the outbox rows
    /// it delivers.
    package func enqueue(_ notices: [AlertNotice], to receiver: String, outbox: [Int64] = []) async {
        guard !notices.isEmpty, let queue = queues.withLock({ $0[receiver] }) else { return }
        await queue.push(notices, outbox: outbox)
    }

    /// Delivery counters per receiver.
    package var statistics: [String: ReceiverStatistics] {
        queues.withLock { $0.mapValues(\.statistics) }
    }

    /// Delivers everything queued now, receiver after receiver (for tests and one-shot tools;
    /// do not combine with ``run()``).
    package func deliverQueued() async {
        let all = queues.withLock { Array($0.values) }.sorted { $0.name < $1.name }
        for queue in all { await queue.deliverQueued(sender: sender, logger: logger) }
    }

    /// Runs the delivery loop of every receiver (present and added later) until cancelled.
    package func run() async {
        let sender = self.sender
        let logger = self.logger
        await withDiscardingTaskGroup { group in
            for await queue in added {
                group.addTask { await queue.work(sender: sender, logger: logger) }
            }
        }
    }

    /// Stops accepting receivers; ``run()`` returns once every loop has ended.
    package func finish() {
        announce.finish()
        let all = queues.withLock { Array($0.values) }
        for queue in all { queue.close() }
    }
}
