import LifelineIngest
import LifelineModel
import PostgresNIO

/// The per-state rows of one request's iOS 27 documents (migration `postgres/0005`), the rows of
/// the SQLite store's `StateRowsStage` in PostgreSQL's terms: per payload, the states it lists
/// and, per state, exit counts (repeated keys summed), signpost counts (summed) and histogram
/// buckets (the first histogram of a metric and the first durations of a signpost win); per
/// diagnostic, the states active before it. Written after the payloads, one `unnest` insert per
/// table; states are created in sorted order, so concurrent writers lock them in the same order.
struct StateRows {
    private struct PayloadState: Hashable {
        var payload: Int64
        var state: ReportedState
    }

    private var active: [PayloadState: Double?] = [:]
    private var exits: [PayloadState: [RollupRows.ExitKey: Int64]] = [:]
    private var signposts: [PayloadState: [RollupRows.Pair: Int64]] = [:]
    private var buckets: [PayloadState: [RollupRows.BucketKey: Int64]] = [:]
    /// States active before each diagnostic, by diagnostic id and the day of its partition.
    private var diagnostics: [Int64: (day: String, states: Set<ReportedState>)] = [:]

    var isEmpty: Bool { active.isEmpty && diagnostics.isEmpty }

    mutating func add(_ metric: MetricPayload, payload: Int64) {
        for entry in metric.stateEntries {
            let key = PayloadState(payload: payload, state: entry.state)
            if active[key] == nil { active[key] = entry.activeSeconds }
            for exit in entry.exits where exit.count > 0 {
                guard let reason = StoredValue.dimension(exit.reason) else { continue }
                exits[key, default: [:]][
                    RollupRows.ExitKey(state: exit.state == .foreground ? 0 : 1, reason: reason), default: 0
                ].addSaturating(exit.count)
            }
            var seen = Set<String>()
            for named in entry.histograms {
                guard let source = StoredValue.dimension(named.name), seen.insert(source).inserted else { continue }
                for bucket in named.histogram.buckets { addBucket(key, source: source, bucket) }
            }
            for signpost in entry.signposts {
                guard let category = StoredValue.dimension(signpost.category),
                    let name = StoredValue.dimension(signpost.name)
                else { continue }
                let pair = RollupRows.Pair(first: category, second: name)
                let first = signposts[key]?[pair] == nil
                signposts[key, default: [:]][pair, default: 0].addSaturating(max(0, signpost.totalCount))
                guard first, let durations = signpost.durations,
                    let source = StoredValue.dimension("signpost:\(signpost.category)/\(signpost.name)")
                else { continue }
                for bucket in durations.buckets { addBucket(key, source: source, bucket) }
            }
        }
    }

    private mutating func addBucket(_ key: PayloadState, source: String, _ bucket: HistogramBucket) {
        guard bucket.count > 0, let low = bucket.start ?? bucket.end, let high = bucket.end ?? bucket.start,
            low.isFinite, high.isFinite
        else { return }
        buckets[key, default: [:]][RollupRows.BucketKey(source: source, start: low, end: high), default: 0]
            .addSaturating(bucket.count)
    }

    mutating func addDiagnostic(_ diagnostic: Int64, day: String, states: [ReportedState]) {
        guard !states.isEmpty else { return }
        diagnostics[diagnostic, default: (day, [])].states.formUnion(states)
    }

    /// Creates the states not known yet and inserts every row.
    func flush(on connection: PostgresConnection, logger: Logger) async throws {
        guard !isEmpty else { return }
        let states = Set(active.keys.map(\.state)).union(diagnostics.values.flatMap(\.states)).sorted()
        let domains = states.map(\.domain)
        let labels = states.map(\.label)
        let metadata = states.map(\.metadata)
        var ids: [ReportedState: Int64] = [:]
        for try await (id, domain, label, meta) in try await connection.query(
            """
            INSERT INTO app_state_values (domain, label, metadata)
            SELECT d, l, m FROM unnest(\(domains)::text[], \(labels)::text[], \(metadata)::text[]) AS s (d, l, m)
            ON CONFLICT (domain, label, metadata) DO UPDATE SET domain = excluded.domain
            RETURNING id, domain, label, metadata
            """, logger: logger
        ).decode((Int64, String, String, String).self) {
            ids[ReportedState(domain: domain, label: label, metadata: meta)] = id
        }
        func id(_ state: ReportedState) throws -> Int64 {
            guard let id = ids[state] else { throw PostgresStoreError("app state upsert returned no id") }
            return id
        }
        let keys = active.keys.sorted { ($0.payload, $0.state) < ($1.payload, $1.state) }
        if !keys.isEmpty {
            let payloads = keys.map(\.payload)
            let stateIDs = try keys.map { try id($0.state) }
            // No array of optionals in the protocol: NaN stands for "not reported".
            let seconds = keys.map { (active[$0] ?? nil).flatMap { $0.isFinite ? $0 : nil } ?? .nan }
            try await connection.query(
                """
                INSERT INTO payload_states (payload, app_state, active_seconds)
                SELECT p, s, NULLIF(a, 'NaN'::float8) FROM unnest(\(payloads)::bigint[], \(stateIDs)::bigint[], \(seconds)::float8[])
                    AS x (p, s, a)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        var exitColumns: ([Int64], [Int64], [Int16], [String], [Int64]) = ([], [], [], [], [])
        var signpostColumns: ([Int64], [Int64], [String], [String], [Int64]) = ([], [], [], [], [])
        var bucketColumns: ([Int64], [Int64], [String], [Double], [Double], [Int64]) = ([], [], [], [], [], [])
        for key in keys {
            let state = try id(key.state)
            for (exit, count) in (exits[key] ?? [:]).sorted(by: { $0.key < $1.key }) {
                exitColumns.0.append(key.payload)
                exitColumns.1.append(state)
                exitColumns.2.append(Int16(exit.state))
                exitColumns.3.append(exit.reason)
                exitColumns.4.append(count)
            }
            for (pair, count) in (signposts[key] ?? [:]).sorted(by: { $0.key < $1.key }) {
                signpostColumns.0.append(key.payload)
                signpostColumns.1.append(state)
                signpostColumns.2.append(pair.first)
                signpostColumns.3.append(pair.second)
                signpostColumns.4.append(count)
            }
            for (bucket, count) in (buckets[key] ?? [:]).sorted(by: { $0.key < $1.key }) {
                bucketColumns.0.append(key.payload)
                bucketColumns.1.append(state)
                bucketColumns.2.append(bucket.source)
                bucketColumns.3.append(bucket.start)
                bucketColumns.4.append(bucket.end)
                bucketColumns.5.append(count)
            }
        }
        if !exitColumns.0.isEmpty {
            let (p, s, k, r, c) = exitColumns
            try await connection.query(
                """
                INSERT INTO state_exit_counts (payload, app_state, state, reason, count)
                SELECT * FROM unnest(\(p)::bigint[], \(s)::bigint[], \(k)::smallint[], \(r)::text[], \(c)::bigint[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !signpostColumns.0.isEmpty {
            let (p, s, k, n, c) = signpostColumns
            try await connection.query(
                """
                INSERT INTO state_signposts (payload, app_state, category, name, total_count)
                SELECT * FROM unnest(\(p)::bigint[], \(s)::bigint[], \(k)::text[], \(n)::text[], \(c)::bigint[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !bucketColumns.0.isEmpty {
            let (p, s, source, start, end, c) = bucketColumns
            try await connection.query(
                """
                INSERT INTO state_buckets (payload, app_state, source, bucket_start, bucket_end, count)
                SELECT * FROM unnest(\(p)::bigint[], \(s)::bigint[], \(source)::text[], \(start)::float8[],
                    \(end)::float8[], \(c)::bigint[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !diagnostics.isEmpty {
            var days: [String] = []
            var diagnosticIDs: [Int64] = []
            var stateIDs: [Int64] = []
            for (diagnostic, entry) in diagnostics.sorted(by: { $0.key < $1.key }) {
                for state in entry.states.sorted() {
                    days.append(entry.day)
                    diagnosticIDs.append(diagnostic)
                    stateIDs.append(try id(state))
                }
            }
            try await connection.query(
                """
                INSERT INTO diagnostic_states (day, diagnostic, app_state)
                SELECT d::date, i, s FROM unnest(\(days)::text[], \(diagnosticIDs)::bigint[], \(stateIDs)::bigint[])
                    AS x (d, i, s)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }
}
