/// Delivery counters of one receiver since start.
package struct ReceiverStatistics: Sendable, Equatable, Codable {
    /// Notification requests delivered (2xx).
    package var sent = 0
    /// Requests given up after their last attempt (or refused with a non-retryable status).
    package var failed = 0
    /// Requests dropped unsent because the queue was full (oldest first).
    package var dropped = 0
    /// Attempts that failed and were retried.
    package var retries = 0
    /// Requests waiting now.
    package var queued = 0

    package init() {}
}
