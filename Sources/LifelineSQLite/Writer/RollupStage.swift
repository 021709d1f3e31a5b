import LifelineModel
import LifelineStorage

/// Keeps the rollup tables up to date for every new payload, in the ingest transaction.
///
/// Each payload's increments are logged in memory (``RollupDeltas``), kept or dropped with its
/// request's savepoint, and the batch's sum is upserted once just before COMMIT: payloads of a
/// batch sharing a rollup key cost one upsert together. The rules mirror the normalized rows
/// (and ``RollupRebuilder``) exactly: exit counts > 0; signpost totals clamped at 0, zero totals
/// kept; the first histogram per metric name and the first duration histogram per signpost;
/// buckets with a positive count and a finite bound; diagnostics as stored.
final class RollupStage: ItemWriteStage {
    /// Scalar metric names of the app time summed into `rollup_metrics`.
    static let foregroundTime = "applicationTimeMetrics.cumulativeForegroundTime"
    static let backgroundTime = "applicationTimeMetrics.cumulativeBackgroundTime"

    static let selectDiagnostics = """
        SELECT kind, app_version, os_version, device_type, occurred_at, crash_group
        FROM diagnostics WHERE payload = ? ORDER BY ordinal
        """

    private var deltas = RollupDeltas()

    private struct SignpostKey: Hashable {
        var category: Int64
        var name: Int64
    }

    /// The metric_names key of a signpost's duration histogram (see `HistogramSource.storageKey`).
    static func signpostSource(category: String, name: String) -> String { "signpost:\(category)/\(name)" }

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        switch stored.item.document.content {
        case .metric(let metric): try write(metric, stored: stored, in: session)
        case .diagnostic: try writeDiagnostics(stored, in: session)
        }
    }

    func requestReleased() { deltas.release() }
    func requestRolledBack() { deltas.rollback() }
    func batchAborted() { deltas.clear() }

    func beforeCommit(on connection: Connection) throws(StoreError) {
        defer { deltas.clear() }
        try RollupFlusher.flush(deltas, on: connection)
    }

    private func write(_ metric: MetricPayload, stored: StoredItem, in session: WriteSession) throws(StoreError) {
        let meta = metric.meta
        let cell = RollupDeltas.Cell(
            app: stored.appID, day: RollupDeltas.day(epochSeconds: stored.occurredAt),
            version: try session.id(.appVersion, meta.appVersion) ?? 0,
            os: try session.id(.osVersion, meta.osVersion) ?? 0,
            device: try session.id(.deviceType, meta.deviceType) ?? 0)
        let foreground = metric.scalars.first { $0.name == Self.foregroundTime }?.measurement.finiteValue
        let background = metric.scalars.first { $0.name == Self.backgroundTime }?.measurement.finiteValue
        deltas.append(
            RollupDeltas.Usage(
                // A 2.0.0 zero-length report (the disk-space snapshot) is not a device-day.
                cell: cell, payloads: metric.isDeviceDay ? 1 : 0, foregroundMilliseconds: foreground ?? 0,
                backgroundMilliseconds: background ?? 0))
        for exit in metric.exits where exit.count > 0 {
            guard let reason = try session.id(.exitReason, exit.reason) else { continue }
            deltas.append(
                RollupDeltas.Exit(
                    cell: cell, state: exit.state == .foreground ? 0 : 1, reason: reason, count: exit.count))
        }
        var seenSignposts = Set<SignpostKey>()
        for signpost in metric.signposts {
            guard let category = try session.id(.signpostCategory, signpost.category),
                let name = try session.id(.signpostName, signpost.name)
            else { continue }
            deltas.append(
                RollupDeltas.Signpost(cell: cell, category: category, name: name, count: max(0, signpost.totalCount)))
            guard seenSignposts.insert(SignpostKey(category: category, name: name)).inserted,
                let durations = signpost.durations,
                let source = try session.id(
                    .metricName, Self.signpostSource(category: signpost.category, name: signpost.name))
            else { continue }
            for bucket in durations.buckets {
                deltas.appendBucket(
                    cell: cell, source: source, start: bucket.start, end: bucket.end, count: bucket.count)
            }
        }
        var seenMetrics = Set<Int64>()
        for named in metric.histograms {
            guard let source = try session.id(.metricName, named.name), seenMetrics.insert(source).inserted else {
                continue
            }
            for bucket in named.histogram.buckets {
                deltas.appendBucket(
                    cell: cell, source: source, start: bucket.start, end: bucket.end, count: bucket.count)
            }
        }
    }

    /// Reads back the diagnostics just written (their own dimensions and crash group).
    private func writeDiagnostics(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        let rows = try session.connection.query(Self.selectDiagnostics, [.integer(stored.payloadID)]) { row in
            RollupDeltas.Diagnostic(
                cell: RollupDeltas.Cell(
                    app: stored.appID, day: RollupDeltas.day(epochSeconds: row.int64(4)), version: row.int64(1),
                    os: row.int64(2), device: row.int64(3)),
                kind: row.text(0), crashGroup: row.int64(5))
        }
        for row in rows { deltas.append(row) }
    }
}
