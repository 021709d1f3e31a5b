import LifelineAnalysis
import LifelineModel
import LifelineStorage

/// Explorer rows not written yet, at both levels, and how a released document is added to them:
/// the ``ExplorerWorker``'s (one per worker, its thread only), and what `lifeline bench
/// explorer-fold` drives without a database.
struct ExplorerRowSet {
    /// The rows' observations, per level, replayed into cells when their seal is prepared
    /// (``ExplorerPendingRow``: a fraction of the decoded cells' memory while they are held).
    var fine: [ExplorerRowKey: ExplorerPendingRow] = [:]
    var byVersion: [ExplorerRowKey: ExplorerPendingRow] = [:]
    /// One row's run of observations as bytes (reused).
    private var run = ExplorerPendingRow()

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

    /// Adds one document's observations to its rows at the levels it goes to
    /// (``ExplorerWorker/Document/addsFine``, ``ExplorerWorker/Document/addsVersion``).
    mutating func add(_ document: ExplorerWorker.Document) {
        let extraction = ExplorerExtractor.extract(document.metric)
        let observations = extraction.observations
        guard extraction.isDeviceDay, !observations.isEmpty else { return }
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
            // Each sample is checked once (`nil`: refused, its cell is made empty, as
            // ``ExplorerCellMap/add(_:at:)`` does) and written once for both levels.
            run.removeAll()
            for observation in observations[start..<end] {
                let sample = ExplorerCell.prepare(observation.sample)
                if let ordinal = observation.ordinal, observation.subject.isEmpty {
                    run.add(sample, ordinal: ordinal)
                } else {
                    run.add(
                        sample,
                        at: ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject),
                        ordinal: observation.ordinal)
                }
            }
            if document.addsFine { fine[key, default: ExplorerPendingRow()].append(run) }
            if document.addsVersion { byVersion[key.byVersion, default: ExplorerPendingRow()].append(run) }
            start = end
        }
    }
}

extension ExplorerRowSet {
    /// Removes and returns the version rows of `parts` (``RollupParts``), in place: the rows of
    /// the other parts stay where they are (rebuilding the dictionary of ~16,000 rows at each seal
    /// was an eighth of the adding thread's time on the iOS 27 load).
    mutating func takeVersionRows(of parts: [Int]) -> [ExplorerRowKey: ExplorerPendingRow] {
        if parts.isEmpty { return [:] }
        if parts.count == RollupParts.count {
            defer { byVersion = [:] }
            return byVersion
        }
        var sealing = Array(repeating: false, count: RollupParts.count)
        for part in parts where sealing.indices.contains(part) { sealing[part] = true }
        let keys = byVersion.keys.filter { sealing[RollupParts.part(app: $0.app, day: $0.day, version: $0.version)] }
        var taken: [ExplorerRowKey: ExplorerPendingRow] = [:]
        taken.reserveCapacity(keys.count)
        for key in keys { taken[key] = byVersion.removeValue(forKey: key) }
        return taken
    }
}

extension ExplorerPendingRow {
    /// ``builder(category:)`` of the row at `key`, its failure a ``StoreError``.
    func builder(for key: ExplorerRowKey) throws(StoreError) -> ExplorerCellMapBuilder {
        try Self.replaying { () throws(SketchDecodingError) in
            try builder(category: ExplorerCategory(rawValue: key.category))
        }
    }

    /// The bytes of the row at `key` written as a new row: ``encodedAlone(category:)`` where it
    /// applies, else its builder's encoding.
    func encoded(for key: ExplorerRowKey) throws(StoreError) -> [UInt8] {
        let category = ExplorerCategory(rawValue: key.category)
        return try Self.replaying { () throws(SketchDecodingError) in
            if let bytes = try encodedAlone(category: category) { return bytes }
            return try builder(category: category).encoded()
        }
    }

    /// `body`'s result, a replay's failure (bytes this type did not write) a ``StoreError``.
    private static func replaying<T>(_ body: () throws(SketchDecodingError) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw StoreError(.internal, "internal storage error", cause: "explorer row not replayed: \(error)")
        }
    }
}
