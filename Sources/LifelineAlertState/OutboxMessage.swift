/// One notification waiting in the durable outbox: written in the same transaction as the state
/// change that caused it, delivered by the leader, marked when its receiver answered (or gave up).
/// A leader killed in between leaves it pending; the next leader delivers it.
package struct OutboxMessage: Sendable, Equatable {
    /// The store's id (0 before it is stored); delivery goes in id order.
    package var id: Int64
    /// The receiver it goes to.
    package var receiver: String
    /// Stable for this one change of this one alert (rule, fingerprint, new status and when it
    /// happened): sent with the notification so a receiver that hears it twice (a leader killed
    /// after sending, before recording the answer) can drop the repeat.
    package var dedupKey: String
    /// The notification itself, as its consumer encoded it (opaque to the stores).
    package var body: String
    /// When it was written, epoch seconds.
    package var createdAt: Int64

    package init(id: Int64 = 0, receiver: String, dedupKey: String, body: String, createdAt: Int64) {
        self.id = id
        self.receiver = receiver
        self.dedupKey = dedupKey
        self.body = body
        self.createdAt = createdAt
    }
}
