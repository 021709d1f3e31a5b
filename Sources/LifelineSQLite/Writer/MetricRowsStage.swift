import LifelineModel
import LifelineStorage

/// Writes the normalized rows of a metric payload: exit counts, signposts, histograms, scalars.
///
/// Within one document, repeated keys are merged: exit counts and signpost totals are summed,
/// for histograms, scalars and signpost details the first occurrence wins. Zero and negative exit
/// counts are not stored (missing means 0); negative totals are stored as 0.
struct MetricRowsStage: ItemWriteStage {
    static let insertExit = "INSERT INTO exit_counts (payload, state, reason, count) VALUES (?, ?, ?, ?)"
    static let insertSignpost = """
        INSERT INTO signposts (payload, category, name, total_count, cpu_time_ms, avg_memory_bytes,
            logical_writes_bytes, hitch_ratio, duration_unit, duration_count, durations)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let insertHistogram = """
        INSERT INTO histograms (payload, metric, unit, total_count, buckets) VALUES (?, ?, ?, ?, ?)
        """
    static let insertScalar = """
        INSERT INTO scalar_metrics (payload, metric, value, unit, raw, std_dev, sample_count)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """

    private struct ExitKey: Hashable {
        var state: Int64
        var reason: Int64
    }

    private struct SignpostKey: Hashable {
        var category: Int64
        var name: Int64
    }

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .metric(let metric) = stored.item.document.content else { return }
        let payload = SQLValue.integer(stored.payloadID)
        try writeExits(metric.exits, payload: payload, in: session)
        try writeSignposts(metric.signposts, payload: payload, in: session)
        var seen = Set<Int64>()
        for named in metric.histograms {
            guard let metricID = try session.id(.metricName, named.name), seen.insert(metricID).inserted else {
                continue
            }
            try session.connection.run(
                Self.insertHistogram,
                [
                    payload, .integer(metricID), .integer(UnitCode.id(named.histogram.unit)),
                    .integer(Self.total(named.histogram)), .blob(HistogramCodec.encode(named.histogram.buckets)),
                ])
        }
        seen.removeAll(keepingCapacity: true)
        for scalar in metric.scalars {
            guard let metricID = try session.id(.metricName, scalar.name), seen.insert(metricID).inserted else {
                continue
            }
            let value = scalar.measurement.finiteValue
            try session.connection.run(
                Self.insertScalar,
                [
                    payload, .integer(metricID), .real(value), .integer(UnitCode.id(scalar.measurement.unit)),
                    value == nil ? .text(scalar.measurement.raw) : .null, .real(scalar.standardDeviation),
                    .integer(scalar.sampleCount.map { max(0, $0) }),
                ])
        }
    }

    private func writeExits(_ exits: [ExitCount], payload: SQLValue, in session: WriteSession) throws(StoreError) {
        var merged: [ExitKey: Int64] = [:]
        var order: [ExitKey] = []
        for exit in exits where exit.count > 0 {
            guard let reason = try session.id(.exitReason, exit.reason) else { continue }
            let key = ExitKey(state: exit.state == .foreground ? 0 : 1, reason: reason)
            if let current = merged[key] {
                merged[key] = current.addingSaturating(exit.count)
            } else {
                merged[key] = exit.count
                order.append(key)
            }
        }
        for key in order {
            try session.connection.run(
                Self.insertExit, [payload, .integer(key.state), .integer(key.reason), .integer(merged[key] ?? 0)])
        }
    }

    private func writeSignposts(
        _ signposts: [SignpostMetric], payload: SQLValue, in session: WriteSession
    ) throws(StoreError) {
        var merged: [SignpostKey: (first: SignpostMetric, total: Int64)] = [:]
        var order: [SignpostKey] = []
        for signpost in signposts {
            guard let category = try session.id(.signpostCategory, signpost.category),
                let name = try session.id(.signpostName, signpost.name)
            else { continue }
            let key = SignpostKey(category: category, name: name)
            let total = max(0, signpost.totalCount)
            if let current = merged[key] {
                merged[key] = (current.first, current.total.addingSaturating(total))
            } else {
                merged[key] = (signpost, total)
                order.append(key)
            }
        }
        for key in order {
            guard let (signpost, total) = merged[key] else { continue }
            try session.connection.run(
                Self.insertSignpost,
                [
                    payload, .integer(key.category), .integer(key.name), .integer(total),
                    .real(signpost.cumulativeCPUTime?.finiteValue), .real(signpost.averageMemory?.finiteValue),
                    .real(signpost.cumulativeLogicalWrites?.finiteValue),
                    .real(signpost.cumulativeHitchTimeRatio?.finiteValue),
                    .integer(signpost.durations.flatMap { UnitCode.id($0.unit) }),
                    .integer(signpost.durations.map(Self.total)),
                    signpost.durations.map { .blob(HistogramCodec.encode($0.buckets)) } ?? .null,
                ])
        }
    }

    /// Sum of the non-negative bucket counts.
    static func total(_ histogram: Histogram) -> Int64 {
        histogram.buckets.lazy.map { max(0, $0.count) }.saturatingSum()
    }
}
