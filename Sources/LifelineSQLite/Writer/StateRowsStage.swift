import LifelineModel
import LifelineStorage

/// Writes what only iOS 27 reports carry: the app states of a metric payload (which ones, for
/// how long, and the exit counts, histograms and signposts observed while each was active), and
/// the states active before a diagnostic. A report's ~3-hour interval slices are not copied into
/// rows (no answer reads them; migration 0018): they stay in its raw document.
///
/// A state's exit counts are packed into its `payload_states` row (`exits`, migration 0027:
/// entries (state, reason id, count) in the rollups' varint layout, ``RollupBlob``), one row per
/// state instead of one per (state, reason), and so are its histograms (`histograms`, migration
/// 0030: each metric's buckets in ``HistogramCodec``'s form, by metric id as a ``BucketCell``).
/// Within one state, repeated exit keys are summed (also across entries of the same state) and
/// the first active time, histogram or signpost of a name wins, as the rollups count a payload's
/// own (``RollupStage``).
struct StateRowsStage: ItemWriteStage {
    static let insertPayloadState = """
        INSERT INTO payload_states (payload, app_state, active_seconds, exits, histograms)
        VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (payload, app_state) DO NOTHING
        """
    static let insertSignpost = """
        INSERT INTO state_signposts (payload, app_state, category, name, total_count, durations)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT (payload, app_state, category, name) DO UPDATE SET total_count = total_count + excluded.total_count
        """
    static let insertDiagnosticState = """
        INSERT INTO diagnostic_states (diagnostic, app_state) VALUES (?1, ?2) ON CONFLICT DO NOTHING
        """

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .metric(let metric) = stored.item.document.content else { return }
        let payload = SQLValue.integer(stored.payloadID)
        // Each state's row once, with the exits and histograms of every entry of that state.
        var states: [State] = []
        var ids: [SQLValue] = []
        for entry in metric.stateEntries {
            let state = try Self.id(entry.state, in: session)
            ids.append(state)
            var exits: [CountEntry] = []
            for exit in entry.exits where exit.count > 0 {
                guard let reason = try session.id(.exitReason, exit.reason) else { continue }
                exits.append(CountEntry(a: exit.state == .foreground ? 0 : 1, b: reason, count: exit.count))
            }
            var histograms: [(source: Int64, buckets: [UInt8])] = []
            for named in entry.histograms {
                guard let metricID = try session.id(.metricName, named.name) else { continue }
                histograms.append((metricID, HistogramCodec.encode(named.histogram.buckets)))
            }
            if let index = states.firstIndex(where: { $0.state == state }) {
                states[index].exits += exits
                states[index].histograms += histograms
            } else {
                states.append(
                    State(state: state, activeSeconds: entry.activeSeconds, exits: exits, histograms: histograms))
            }
        }
        for row in states {
            let exits = RollupBlob.normalize(row.exits)
            // A metric's first histogram in the state wins.
            var seen = Set<Int64>()
            let histograms = row.histograms.filter { seen.insert($0.source).inserted }
            try session.connection.run(
                Self.insertPayloadState,
                [
                    payload, row.state, .real(row.activeSeconds),
                    exits.isEmpty ? .null : .blob(RollupBlob.encode(exits)),
                    histograms.isEmpty ? .null : .blob(BucketCell.encode(histograms)),
                ])
        }
        for (entry, state) in zip(metric.stateEntries, ids) {
            for signpost in entry.signposts {
                guard let category = try session.id(.signpostCategory, signpost.category),
                    let name = try session.id(.signpostName, signpost.name)
                else { continue }
                try session.connection.run(
                    Self.insertSignpost,
                    [
                        payload, state, .integer(category), .integer(name), .integer(max(0, signpost.totalCount)),
                        signpost.durations.map { .blob(HistogramCodec.encode($0.buckets)) } ?? .null,
                    ])
            }
        }
    }

    /// The states active before diagnostic `diagnosticID` (called by ``DiagnosticRowsStage``).
    static func writeStates(_ states: [ReportedState], diagnostic diagnosticID: Int64, in session: WriteSession)
        throws(StoreError)
    {
        for state in states {
            try session.connection.run(
                Self.insertDiagnosticState, [.integer(diagnosticID), try id(state, in: session)])
        }
    }

    /// One state's row as ``write(_:in:)`` gathers it from the state's entries.
    private struct State {
        var state: SQLValue
        var activeSeconds: Double?
        var exits: [CountEntry]
        var histograms: [(source: Int64, buckets: [UInt8])]
    }

    /// Packs the exit rows of migration 0007's `state_exit_counts` into their `payload_states`
    /// rows (migration 0027), then drops that table; inside the migration's transaction. The rows
    /// are read in key order, one (payload, state) at a time: a database of a million reports holds
    /// tens of millions of them.
    static func packStoredExits(on connection: Connection) throws(StoreError) {
        let read = try connection.cached(
            "SELECT payload, app_state, state, reason, count FROM state_exit_counts ORDER BY payload, app_state")
        defer { read.reset() }
        var current: (payload: Int64, state: Int64)?
        var exits: [CountEntry] = []
        func flush() throws(StoreError) {
            guard let current, !exits.isEmpty else { return }
            try connection.run(
                """
                INSERT INTO payload_states (payload, app_state, exits) VALUES (?1, ?2, ?3)
                ON CONFLICT (payload, app_state) DO UPDATE SET exits = excluded.exits
                """,
                [
                    .integer(current.payload), .integer(current.state),
                    .blob(RollupBlob.encode(RollupBlob.normalize(exits))),
                ])
            exits.removeAll(keepingCapacity: true)
        }
        while try read.step() {
            let key = (payload: read.int64(0), state: read.int64(1))
            if let current, current != key { try flush() }
            current = key
            exits.append(CountEntry(a: read.int64(2), b: read.int64(3), count: read.int64(4)))
        }
        try flush()
        read.reset()
        try connection.execute("DROP TABLE state_exit_counts")
    }

    /// The id of `state` in `app_state_values`, created on first sight (``Interner/stateID(_:on:)``).
    static func id(_ state: ReportedState, in session: WriteSession) throws(StoreError) -> SQLValue {
        .integer(try session.interner.stateID(state, on: session.connection))
    }

    /// Packs the `state_histograms` rows stored before migration 0030 into their `payload_states`
    /// rows' `histograms` (each (payload, state)'s by metric id, ``BucketCell``), then drops that
    /// table; inside the migration's transaction.
    static func packStoredHistograms(on connection: Connection) throws(StoreError) {
        let read = try connection.cached(
            "SELECT payload, app_state, metric, buckets FROM state_histograms ORDER BY payload, app_state, metric")
        defer { read.reset() }
        var current: (payload: Int64, state: Int64)?
        var histograms: [(source: Int64, buckets: [UInt8])] = []
        func flush() throws(StoreError) {
            guard let current, !histograms.isEmpty else { return }
            try connection.run(
                """
                INSERT INTO payload_states (payload, app_state, histograms) VALUES (?1, ?2, ?3)
                ON CONFLICT (payload, app_state) DO UPDATE SET histograms = excluded.histograms
                """,
                [.integer(current.payload), .integer(current.state), .blob(BucketCell.encode(histograms))])
            histograms.removeAll(keepingCapacity: true)
        }
        while try read.step() {
            let key = (payload: read.int64(0), state: read.int64(1))
            if let current, current != key { try flush() }
            current = key
            histograms.append((read.int64(2), read.blob(3)))
        }
        try flush()
        read.reset()
        try connection.execute("DROP TABLE state_histograms")
    }
}
