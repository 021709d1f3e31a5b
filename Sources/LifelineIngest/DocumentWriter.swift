/// Where accepted documents go: a store that writes one ``IngestRequest`` atomically (all its
/// documents or none), deduplicates by content hash and idempotency key, and returns only once
/// the request is durable. Owned here, by ingest; each store module implements it.
package protocol DocumentWriter: Sendable {
    func write(_ request: IngestRequest) async throws(IngestError) -> IngestOutcome
    /// Stores a body Lifeline cannot read yet, raw, once per app and content; durable before it
    /// returns. `true` when it was new.
    func keep(_ document: UnreadDocument) async throws(IngestError) -> Bool
}
