/// The documents of one upload, written atomically (all or none) by the ``IngestWriter``.
package struct IngestRequest: Sendable, Equatable {
    /// Bundle id of the app (scope of the idempotency key).
    package var app: String
    /// The documents, in body order.
    package var items: [IngestItem]
    /// The client's `Idempotency-Key`, if sent: a repeated key gets the first outcome back.
    package var idempotencyKey: String?

    package init(app: String, items: [IngestItem], idempotencyKey: String? = nil) {
        self.app = app
        self.items = items
        self.idempotencyKey = idempotencyKey
    }
}
