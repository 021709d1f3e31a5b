import Logging
import Synchronization

/// How a queued request ended, for the outbox rows it carries.
package enum DeliveryOutcome: Sendable, Equatable {
    /// The receiver answered 2xx.
    case delivered
    /// The last attempt failed (or the error is not worth retrying).
    case failed
    /// Dropped unsent: the queue was full, or closed before it was sent.
    case dropped
}

/// The bounded queue of one receiver and its delivery loop: notifications go out in order, with
/// retries and exponential backoff; when the queue is full the oldest is dropped and counted, so
/// a failing receiver never holds up evaluation (or other receivers).
final class ReceiverQueue: Sendable {
    /// One request: its alerts, and the outbox rows it delivers (empty for re-sends).
    struct Item: Sendable {
        var notices: [AlertNotice]
        var outbox: [Int64]
    }

    private struct State {
        var config: ReceiverConfig
        var items: [Item] = []
        var statistics = ReceiverStatistics()
        var closed = false
    }

    private let state: Mutex<State>
    private let signal: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// Told how every request carrying outbox rows ended.
    private let finished: @Sendable ([Int64], DeliveryOutcome) async -> Void

    init(config: ReceiverConfig, finished: @escaping @Sendable ([Int64], DeliveryOutcome) async -> Void) {
        state = Mutex(State(config: config))
        (signal, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.finished = finished
    }

    var name: String { state.withLock { $0.config.name } }

    var statistics: ReceiverStatistics {
        state.withLock {
            var statistics = $0.statistics
            statistics.queued = $0.items.count
            return statistics
        }
    }

    /// Replaces the settings (after a reload); queued notifications stay.
    func update(_ config: ReceiverConfig) {
        state.withLock { $0.config = config }
    }

    /// Queues one request's alerts, dropping the oldest request when full.
    func push(_ notices: [AlertNotice], outbox: [Int64] = []) async {
        let dropped = state.withLock { state -> Item? in
            guard !state.closed else { return Item(notices: notices, outbox: outbox) }
            state.items.append(Item(notices: notices, outbox: outbox))
            guard state.items.count > state.config.queueCapacity else { return nil }
            state.statistics.dropped += 1
            return state.items.removeFirst()
        }
        wake.yield()
        if let dropped, !dropped.outbox.isEmpty { await finished(dropped.outbox, .dropped) }
    }

    /// Stops the loop once the queue is empty.
    func close() {
        state.withLock { $0.closed = true }
        wake.finish()
    }

    private func pop() -> (ReceiverConfig, Item)? {
        state.withLock { state in
            guard !state.items.isEmpty else { return nil }
            return (state.config, state.items.removeFirst())
        }
    }

    /// Delivers until closed (after draining) or cancelled.
    func work(sender: any NotificationSender, logger: Logger) async {
        var iterator = signal.makeAsyncIterator()
        while !Task.isCancelled {
            await deliverQueued(sender: sender, logger: logger)
            if state.withLock({ $0.closed }) { return }
            guard await iterator.next() != nil else {
                await deliverQueued(sender: sender, logger: logger)
                return
            }
        }
    }

    /// Delivers everything queued now, in order.
    func deliverQueued(sender: any NotificationSender, logger: Logger) async {
        while !Task.isCancelled, let (config, item) = pop() {
            let outcome = await deliver(item.notices, config: config, sender: sender, logger: logger)
            if !item.outbox.isEmpty { await finished(item.outbox, outcome) }
        }
    }

    private func deliver(
        _ notices: [AlertNotice], config: ReceiverConfig, sender: any NotificationSender, logger: Logger
    ) async -> DeliveryOutcome {
        let body = NotificationPayload.body(for: config, notices)
        var delay = config.initialBackoff
        for attempt in 1...config.maxAttempts {
            do {
                try await sender.post(
                    url: config.endpoint, headers: config.headers, body: body, timeout: config.timeout)
                state.withLock { $0.statistics.sent += 1 }
                return .delivered
            } catch {
                let last = attempt == config.maxAttempts || !error.isRetryable
                logger.log(
                    level: last ? .error : .warning,
                    last ? "notification dropped" : "notification failed, retrying",
                    metadata: [
                        "receiver": "\(config.name)", "attempt": "\(attempt)", "alerts": "\(notices.count)",
                        "error": "\(error)",
                    ])
                if last {
                    state.withLock { $0.statistics.failed += 1 }
                    return .failed
                }
                state.withLock { $0.statistics.retries += 1 }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    // Shutting down: left for the next start (or leader), which sends it again.
                    return .dropped
                }
                delay = min(delay * 2, .seconds(60))
            }
        }
        return .failed
    }
}
