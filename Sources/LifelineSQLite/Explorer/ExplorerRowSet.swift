import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Explorer rows not written yet, at both levels, and how a released document is added to them:
/// the ``ExplorerWorker``'s (one per worker, its thread only), and what `lifeline bench
/// explorer-fold` drives without a database.
struct ExplorerRowSet {
    var fine: [ExplorerRowKey: ExplorerCellMapBuilder] = [:]
    /// The version-level rows' observations, merged when their seal is prepared
    /// (``ExplorerPendingRow``: a version row gathers documents for seconds).
    var byVersion: [ExplorerRowKey: ExplorerPendingRow] = [:]
    /// One document's prepared samples, by observation, reused (prepared once for both levels;
    /// `nil`: refused, its cell is made empty, as ``ExplorerCellMap/add(_:at:)`` does).
    private var samples: [ExplorerCell.Prepared?] = []

    /// The row an observation goes to besides its app state: its catalog metric's category, or
    /// the category key of a metric outside the catalog.
    private enum RowCategory: Equatable {
        case catalog(ExplorerCategory)
        case other(Substring)

        init(_ observation: ExplorerObservation) {
            if let ordinal = observation.ordinal {
                self = .catalog(ExplorerCatalog.categories[ordinal])
            } else {
                self = .other(ExplorerCatalog.categoryKey(ofMetric: observation.metric))
            }
        }

        var key: String {
            switch self {
            case .catalog(let category): category.rawValue
            case .other(let key): String(key)
            }
        }
    }

    /// Adds one document's observations to its rows at both levels (the version level only for a
    /// ``ExplorerWorker/Document/versionOnly`` one).
    mutating func add(_ document: ExplorerWorker.Document) {
        let extraction = ExplorerExtractor.extract(document.metric)
        let observations = extraction.observations
        guard extraction.isDeviceDay, !observations.isEmpty else { return }
        samples.reserveCapacity(observations.count)
        for observation in observations { samples.append(ExplorerCell.prepare(observation.sample)) }
        // Observations come in runs of one row (a category of an app state): each row's key is
        // made and found once per run and level, not per observation.
        var start = 0
        while start < observations.count {
            let appState = observations[start].appState
            let category = RowCategory(observations[start])
            var end = start + 1
            while end < observations.count, observations[end].appState == appState,
                RowCategory(observations[end]) == category
            {
                end += 1
            }
            let key = ExplorerRowKey(
                app: document.app, day: document.day, version: document.version, os: document.os,
                device: document.device, appState: appState, category: category.key)
            if !document.versionOnly { Self.add(start..<end, of: observations, samples, at: key, to: &fine) }
            Self.add(start..<end, of: observations, samples, at: key.byVersion, to: &byVersion)
            start = end
        }
        samples.removeAll(keepingCapacity: true)
    }

    /// Static: a method of the set would copy it, both dictionaries with it, to pass `rows` inout.
    private static func add<Row: ExplorerRowAdding>(
        _ run: Range<Int>, of observations: [ExplorerObservation], _ samples: [ExplorerCell.Prepared?],
        at key: ExplorerRowKey, to rows: inout [ExplorerRowKey: Row]
    ) {
        var slot = rows.index(forKey: key)
        if slot == nil {
            rows[key] = Row(category: ExplorerCategory(rawValue: key.category))
            slot = rows.index(forKey: key)
        }
        guard let slot else { return }
        for index in run {
            let observation = observations[index]
            if let ordinal = observation.ordinal, observation.subject.isEmpty {
                rows.values[slot].add(samples[index], ordinal: ordinal)
            } else {
                rows.values[slot].add(
                    samples[index], at: ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject),
                    ordinal: observation.ordinal)
            }
        }
    }
}

/// A row observations are added to: cells at once, or their bytes, merged later.
protocol ExplorerRowAdding {
    init(category: ExplorerCategory?)
    mutating func add(_ sample: ExplorerCell.Prepared?, ordinal: Int)
    mutating func add(_ sample: ExplorerCell.Prepared?, at entry: ExplorerCellMap.Key, ordinal: Int?)
}

extension ExplorerCellMapBuilder: ExplorerRowAdding {}

extension ExplorerPendingRow: ExplorerRowAdding {
    init(category: ExplorerCategory?) { self.init() }
}

extension ExplorerPendingRow {
    /// ``builder(category:)`` of the row at `key`, its failure a ``StoreError``.
    func builder(for key: ExplorerRowKey) throws(StoreError) -> ExplorerCellMapBuilder {
        do {
            return try builder(category: ExplorerCategory(rawValue: key.category))
        } catch {
            throw StoreError(.internal, "internal storage error", cause: "explorer row not replayed: \(error)")
        }
    }
}
