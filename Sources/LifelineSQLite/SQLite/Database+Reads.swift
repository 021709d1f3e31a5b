import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Simple reads for the server and tests (the query engine is separate).
extension Database {
    /// Number of stored payloads, optionally of one app and/or kind.
    package func payloadCount(app: String? = nil, kind: PayloadKind? = nil) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) -> Int in
            let count = try connection.first(
                """
                SELECT count(*) FROM payloads p
                WHERE (?1 IS NULL OR p.app = (SELECT id FROM apps WHERE bundle_id = ?1))
                  AND (?2 IS NULL OR p.kind = ?2)
                """, [.text(app), .text(kind?.rawValue)]
            ) { $0.int64(0) }
            return Int(count ?? 0)
        }
    }

    /// Documents of `app` received at or after `since` (epoch milliseconds): the start of the
    /// per-app daily quota's count.
    package func documentsReceived(app: String, since: Int64) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) -> Int in
            Int(
                try connection.first(
                    """
                    SELECT count(*) FROM payloads p JOIN apps a ON a.id = p.app
                    WHERE a.bundle_id = ? AND p.received_at_ms >= ?
                    """, [.text(app), .integer(since)], { $0.int64(0) }) ?? 0)
        }
    }

    /// The payload with `id`, with its raw document; `nil` if there is none.
    package func payload(id: Int64) throws(StoreError) -> StoredPayload? {
        try withConnection { (connection) throws(StoreError) -> StoredPayload? in
            try connection.first(
                """
                SELECT p.id, a.bundle_id, p.kind, v.value, b.value, o.value, d.value, r.value, h.value, p.day,
                    p.begin_at, p.end_at, p.begin_raw, p.end_raw, p.received_at_ms, p.content_hash,
                    coalesce(w.raw, k.raw), p.unparsed_measurements
                FROM payloads p
                JOIN apps a ON a.id = p.app
                LEFT JOIN payload_raw w ON w.payload = p.id
                LEFT JOIN payload_raw_packed k ON k.payload = p.id
                LEFT JOIN app_versions v ON v.id = p.app_version
                LEFT JOIN builds b ON b.id = p.build
                LEFT JOIN os_versions o ON o.id = p.os_version
                LEFT JOIN device_types d ON d.id = p.device_type
                LEFT JOIN regions r ON r.id = p.region
                LEFT JOIN architectures h ON h.id = p.arch
                WHERE p.id = ? AND coalesce(w.raw, k.raw) IS NOT NULL
                """, [.integer(id)]
            ) { row in
                StoredPayload(
                    id: row.int64(0), app: row.text(1), kind: PayloadKind(rawValue: row.text(2)) ?? .metric,
                    appVersion: row.optionalText(3), build: row.optionalText(4), osVersion: row.optionalText(5),
                    deviceType: row.optionalText(6), region: row.optionalText(7), architecture: row.optionalText(8),
                    day: row.text(9), begin: row.optionalInt64(10), end: row.optionalInt64(11),
                    beginRaw: row.optionalText(12), endRaw: row.optionalText(13), receivedAt: row.int64(14),
                    contentHash: row.blob(15), raw: row.blob(16), unparsedMeasurements: Int(row.int64(17)))
            }
        }
    }

    /// Exit counters summed over all folded metric payloads of `app`, by state and reason (from
    /// the rollups).
    package func exitTotals(app: String) throws(StoreError) -> [ExitCount] {
        let names = self.names
        return try withConnection { (connection) throws(StoreError) -> [ExitCount] in
            let reader = SQLiteRollupReader(connection: connection, names: names, symbols: nil)
            let all = Scope(app: app, days: DayRange(from: .first, to: UTCDay(ordinal: 2_000_000) ?? .first))
            let rows: [ExitRow]
            do {
                rows = try reader.exits(all)
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.internal, "internal storage error", cause: "\(error)")
            }
            var totals: [ExitCount] = []
            for row in rows {
                let state: AppState = row.state
                if let index = totals.firstIndex(where: { $0.state == state && $0.reason == row.reason }) {
                    totals[index].count.addSaturating(row.count)
                } else {
                    totals.append(ExitCount(state: state, reason: row.reason, count: row.count))
                }
            }
            return totals.sorted {
                ($0.state == .foreground ? 0 : 1, $0.reason) < ($1.state == .foreground ? 0 : 1, $1.reason)
            }
        }
    }

    /// The crash groups of `app`, most frequent first.
    package func crashGroups(app: String) throws(StoreError) -> [CrashGroup] {
        try withConnection { (connection) throws(StoreError) -> [CrashGroup] in
            try connection.query(
                """
                SELECT g.id, a.bundle_id, g.fingerprint, g.group_kind, g.title, g.first_seen, g.last_seen, g.count
                FROM crash_groups g JOIN apps a ON a.id = g.app
                WHERE a.bundle_id = ?
                ORDER BY g.count DESC, g.id
                """, [.text(app)]
            ) { row in
                CrashGroup(
                    id: row.int64(0), app: row.text(1), fingerprint: row.text(2), groupKind: row.text(3),
                    title: row.text(4), firstSeen: row.int64(5), lastSeen: row.int64(6), count: row.int64(7))
            }
        }
    }

    /// `PRAGMA integrity_check`: `"ok"` when the file is sound, else SQLite's report.
    package func integrityCheck() throws(StoreError) -> String {
        try withConnection { (connection) throws(StoreError) -> String in
            let lines = try connection.query("PRAGMA integrity_check") { $0.text(0) }
            return lines.joined(separator: "\n")
        }
    }

    /// A constant-time liveness read for readiness probes: the schema version, read through the pool.
    /// (`PRAGMA quick_check` reads the whole file — seconds per probe on a large database.)
    package func ping() throws(StoreError) -> Int64 {
        try withConnection { (connection) throws(StoreError) -> Int64 in
            try connection.first("SELECT coalesce(max(version), 0) FROM schema_migrations") { $0.int64(0) } ?? 0
        }
    }

    /// Bytes of the database file as SQLite sees it (page count × page size, WAL excluded).
    package func fileBytes() throws(StoreError) -> Int64 {
        try withConnection { (connection) throws(StoreError) -> Int64 in
            let pages = try connection.first("PRAGMA page_count") { $0.int64(0) } ?? 0
            let size = try connection.first("PRAGMA page_size") { $0.int64(0) } ?? 0
            return pages * size
        }
    }

    /// Copies committed WAL content into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`).
    package func checkpoint() throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int64(0) }
        }
    }
}
