import LifelineStorage

/// What a compaction of raw copies did (``Database/compactRawCopies(batch:retrainDistance:progress:)``), and the
/// database's totals since its first.
package struct RawCompactionReport: Sendable, Codable, Equatable {
    /// Payloads considered by this run, and the copies it rewrote with what they weighed before
    /// and after.
    package var considered = 0
    package var compacted = 0
    package var bytesBefore = 0
    package var bytesAfter = 0
    /// The database's totals: the watermark (every payload up to it considered), copies rewritten,
    /// their bytes before and after, and the dictionaries stored.
    package var through: Int64 = 0
    package var totalCompacted = 0
    package var totalBytesBefore = 0
    package var totalBytesAfter = 0
    package var dictionaries = 0

    enum CodingKeys: String, CodingKey {
        case considered, compacted, through, dictionaries
        case bytesBefore = "bytes_before"
        case bytesAfter = "bytes_after"
        case totalCompacted = "total_compacted"
        case totalBytesBefore = "total_bytes_before"
        case totalBytesAfter = "total_bytes_after"
    }
}

extension Database {
    /// Re-deflates the raw copies of every folded payload above the compaction watermark against
    /// a preset dictionary per app and kind (``RawCompactor``), `batch` payloads per transaction,
    /// on a connection of its own; beside a running server (which compacts too) a batch that
    /// meets another's writes is read again. `progress` is told the payloads considered so far
    /// and how many wait in all. `retrainDistance`: see ``RawCompactor/defaultRetrainDistance``.
    package func compactRawCopies(
        batch: Int = RawCompactor.batchSize, retrainDistance: Int64 = RawCompactor.defaultRetrainDistance,
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(StoreError) -> RawCompactionReport {
        let connection = try openConnection()
        defer { connection.close() }
        try Migrator(migrations: EmbeddedMigrations.all, now: { 0 }).requireCurrent(connection)
        let total =
            try connection.first(
                """
                SELECT count(*) FROM payloads WHERE id > (SELECT through FROM raw_compaction WHERE id = 1)
                    AND id <= (SELECT folded_through FROM aggregation_state WHERE id = 1)
                """
            ) { Int($0.int64(0)) } ?? 0
        var compactor = RawCompactor()
        compactor.retrainDistance = max(1, retrainDistance)
        var report = RawCompactionReport()
        var conflicts = 0
        while true {
            let next = try compactor.prepare(on: connection, limit: batch)
            if next.isEmpty { break }
            guard try RawCompactor.apply(next, on: connection) else {
                conflicts += 1
                if conflicts > 100 {
                    throw StoreError(
                        .unavailable, "raw copies could not be compacted: another process keeps writing them")
                }
                compactor.reset()
                continue
            }
            report.considered += next.considered
            report.compacted += next.copies.count
            report.bytesBefore += next.bytesBefore
            report.bytesAfter += next.bytesAfter
            progress(report.considered, total)
        }
        let totals = try connection.first(
            """
            SELECT through, compacted, bytes_before, bytes_after, (SELECT count(*) FROM raw_dictionaries)
            FROM raw_compaction WHERE id = 1
            """
        ) { ($0.int64(0), Int($0.int64(1)), Int($0.int64(2)), Int($0.int64(3)), Int($0.int64(4))) }
        if let totals {
            (report.through, report.totalCompacted, report.totalBytesBefore, report.totalBytesAfter) =
                (totals.0, totals.1, totals.2, totals.3)
            report.dictionaries = totals.4
        }
        return report
    }
}
