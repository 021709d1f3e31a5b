import LifelineIngest

/// The SQLite writer as ingest's ``DocumentWriter``: store errors become ingest refusals (the
/// store's own message stays in the log of the caller).
extension IngestWriter: DocumentWriter {
    package func keep(_ document: UnreadDocument) async throws(IngestError) -> Bool {
        let database = self.database
        do {
            return try await database.onStoreThread { try $0.keepUnread(document) }
        } catch {
            throw IngestError(
                .unavailable, code: "database_unavailable",
                "the store cannot write right now; nothing was stored, retry later")
        }
    }

    package func write(_ request: IngestRequest) async throws(IngestError) -> IngestOutcome {
        do {
            return try await submit(request)
        } catch {
            switch error.code {
            case .unavailable:
                throw IngestError(
                    .unavailable, code: "database_unavailable",
                    "the store cannot write right now; nothing was stored, retry later")
            case .invalid:
                throw IngestError(.unprocessable, code: "invalid", error.message)
            default:
                throw IngestError(.internal, code: "internal", "internal error")
            }
        }
    }
}
