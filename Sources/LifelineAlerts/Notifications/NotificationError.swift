/// A notification that could not be delivered.
package struct NotificationError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    /// Whether trying again may help (network errors, 5xx, 429).
    package var isRetryable: Bool

    package init(_ message: String, isRetryable: Bool) {
        self.message = message
        self.isRetryable = isRetryable
    }

    package var description: String { message }
}
