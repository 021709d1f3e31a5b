import Logging
import Synchronization

/// The bounded queue of one receiver and its delivery loop: notifications go out in order, with
/// retries and exponential backoff; when the queue is full the oldest is dropped and counted, so
/// a failing receiver never holds up evaluation (or other receivers).
final class ReceiverQueue: Sendable {
    private struct State {
        var config: ReceiverConfig
        var items: [[AlertNotice]] = []
        var statistics = ReceiverStatistics()
        var closed = false
    }

    private let state: Mutex<State>
    private let signal: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(config: ReceiverConfig) {
        state = Mutex(State(config: config))
        (signal, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
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
    func push(_ notices: [AlertNotice]) {
        state.withLock { state in
            guard !state.closed else { return }
            state.items.append(notices)
            if state.items.count > state.config.queueCapacity {
                state.items.removeFirst()
                state.statistics.dropped += 1
            }
        }
        wake.yield()
    }

    /// Stops the loop once the queue is empty.
    func close() {
        state.withLock { $0.closed = true }
        wake.finish()
    }

    private func pop() -> (ReceiverConfig, [AlertNotice])? {
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
        while !Task.isCancelled, let (config, notices) = pop() {
            await deliver(notices, config: config, sender: sender, logger: logger)
        }
    }

    private func deliver(
        _ notices: [AlertNotice], config: ReceiverConfig, sender: any NotificationSender, logger: Logger
    ) async {
        let body = NotificationPayload.body(for: config, notices)
        var delay = config.initialBackoff
        for attempt in 1...config.maxAttempts {
            do {
                try await sender.post(
                    url: config.endpoint, headers: config.headers, body: body, timeout: config.timeout)
                state.withLock { $0.statistics.sent += 1 }
                return
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
                    return
                }
                state.withLock { $0.statistics.retries += 1 }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return
                }
                delay = min(delay * 2, .seconds(60))
            }
        }
    }
}
