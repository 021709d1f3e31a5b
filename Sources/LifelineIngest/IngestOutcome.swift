/// What happened to an ``IngestRequest``; returned only once it is durable.
package struct IngestOutcome: Sendable, Equatable {
    /// Documents stored by this request.
    package var accepted: Int
    /// Documents already stored (same app and content), including repeats within the request.
    package var duplicates: Int
    /// Payload id per item, in item order (the existing id for duplicates).
    package var ids: [Int64]
    /// `true` when answered from a stored idempotency key (then everything counts as duplicate).
    package var replayed: Bool
    /// Bodies kept raw because Lifeline cannot read them yet (0 or 1; a repeat counts as a duplicate).
    package var keptRaw: Int = 0
    /// Why a body was kept raw, and the decoder's words (`nil` for a body that was read).
    package var keptReason: String?
    package var keptDetail: String?

    package init(accepted: Int, duplicates: Int, ids: [Int64], replayed: Bool = false) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.ids = ids
        self.replayed = replayed
    }
}
