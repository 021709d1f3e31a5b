import LifelineIngest
import LifelineModel
import LifelineStorage
import PostgresNIO

/// The fold's writes of a diagnostic document: its crash group, its row and its frames.
extension PostgresStore {
    static func crashGroup(
        _ diagnostic: Diagnostic, app: Int64, occurredAt: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        let (fingerprint, kind) = StoredValue.crashGroup(diagnostic)
        let title = diagnostic.signature.title
        for try await id in try await connection.query(
            """
            INSERT INTO crash_groups (app, fingerprint, group_kind, title, first_seen, last_seen, count)
            VALUES (\(app), \(fingerprint), \(kind), \(title), \(occurredAt), \(occurredAt), 1)
            ON CONFLICT (app, fingerprint) DO UPDATE SET count = crash_groups.count + 1,
                first_seen = LEAST(crash_groups.first_seen, excluded.first_seen),
                last_seen = GREATEST(crash_groups.last_seen, excluded.last_seen)
            RETURNING id
            """, logger: logger
        ).decode(Int64.self) {
            return id
        }
        throw PostgresStoreError("crash group upsert returned no id")
    }

    /// Inserts one diagnostic and its frames in the partitions of `day` (its payload's); returns its id.
    static func insert(
        _ diagnostic: Diagnostic, ordinal: Int, payload: Int64, day: String, group: Int64, cell: RollupRows.Cell,
        occurredAt: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        let ordinal = Int64(ordinal)
        let kind = diagnostic.kind.rawValue
        let (exceptionType, exceptionCode, signal) = (
            diagnostic.exceptionType, diagnostic.exceptionCode, diagnostic.signal
        )
        let (reason, category, pid) = (
            diagnostic.terminationReason, diagnostic.terminationCategory, diagnostic.meta.pid
        )
        let (signpostData, message) = (diagnostic.signpostData, diagnostic.exceptionReason?.composedMessage)
        var id: Int64?
        for try await value in try await connection.query(
            """
            INSERT INTO diagnostics (day, payload, ordinal, kind, app_version, os_version, device_type, occurred_at,
                exception_type, exception_code, signal, termination_reason, termination_category, pid, signpost_data,
                exception_message, crash_group)
            VALUES (\(day)::date, \(payload), \(ordinal), \(kind), \(cell.version), \(cell.os), \(cell.device), \(occurredAt),
                \(exceptionType), \(exceptionCode), \(signal), \(reason), \(category), \(pid), \(signpostData),
                \(message), \(group))
            RETURNING id
            """, logger: logger
        ).decode(Int64.self) {
            id = value
        }
        guard let id else { throw PostgresStoreError("diagnostic insert returned no id") }
        let chain = (diagnostic.callStackTree?.attributedChain ?? []).prefix(StoredValue.maxFrames)
        guard !chain.isEmpty else { return id }
        let positions = chain.indices.map { Int64($0) }
        let names = chain.map { $0.binaryName ?? "" }
        let uuids = chain.map { $0.binaryUUID ?? "" }
        let addresses = chain.map { Int64(bitPattern: $0.address) }
        let offsets = chain.map { Int64(bitPattern: $0.offsetIntoBinaryTextSegment) }
        try await connection.query(
            """
            INSERT INTO diagnostic_frames (day, diagnostic, position, binary_name, binary_uuid, address, "offset")
            SELECT \(day)::date, \(id), p, NULLIF(n, ''), NULLIF(u, ''), a, o
            FROM unnest(\(positions)::bigint[], \(names)::text[], \(uuids)::text[], \(addresses)::bigint[],
                \(offsets)::bigint[]) AS f (p, n, u, a, o)
            """, logger: logger)
        return id
    }
}
