import LifelineAnalysis
import LifelineModel

/// Explorer rows not written yet, at both levels, and how a released document is added to them:
/// the ``ExplorerWorker``'s (one per worker, its thread only), and what `lifeline bench
/// explorer-fold` drives without a database.
struct ExplorerRowSet {
    var fine: [ExplorerRowKey: ExplorerCellMapBuilder] = [:]
    var byVersion: [ExplorerRowKey: ExplorerCellMapBuilder] = [:]
    /// One document's observations, reused.
    private var pending: [Pending] = []

    /// One observation of a document: its row, cell and sample, prepared once for both levels
    /// (`nil`: refused; its cell is made empty, as ``ExplorerCellMap/add(_:at:)`` does).
    private struct Pending {
        var key: ExplorerRowKey
        /// The cell by its key: a series, or a metric outside the catalog; `nil` for a catalog
        /// metric's own cell, added by ``ordinal``.
        var entry: ExplorerCellMap.Key?
        var ordinal: Int?
        var sample: ExplorerCell.Prepared?
    }

    /// Adds one document's observations to its rows at both levels (the version level only for a
    /// ``ExplorerWorker/Document/versionOnly`` one).
    mutating func add(_ document: ExplorerWorker.Document) {
        let extraction = ExplorerExtractor.extract(document.metric)
        guard extraction.isDeviceDay, !extraction.observations.isEmpty else { return }
        pending.reserveCapacity(extraction.observations.count)
        for observation in extraction.observations {
            let category =
                observation.ordinal.map { ExplorerCatalog.categories[$0].rawValue }
                ?? String(ExplorerCatalog.categoryKey(ofMetric: observation.metric))
            let key = ExplorerRowKey(
                app: document.app, day: document.day, version: document.version, os: document.os,
                device: document.device, appState: observation.appState, category: category)
            let byOrdinal = observation.ordinal != nil && observation.subject.isEmpty
            pending.append(
                Pending(
                    key: key,
                    entry: byOrdinal
                        ? nil : ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject),
                    ordinal: observation.ordinal, sample: ExplorerCell.prepare(observation.sample)))
        }
        // Observations come in runs of one row (a category of an app state): each row is found
        // once per run and level.
        var start = 0
        while start < pending.count {
            let key = pending[start].key
            var end = start + 1
            while end < pending.count, pending[end].key == key { end += 1 }
            if !document.versionOnly { Self.add(pending[start..<end], at: key, to: &fine) }
            Self.add(pending[start..<end], at: key.byVersion, to: &byVersion)
            start = end
        }
        pending.removeAll(keepingCapacity: true)
    }

    private static func add(
        _ run: ArraySlice<Pending>, at key: ExplorerRowKey, to rows: inout [ExplorerRowKey: ExplorerCellMapBuilder]
    ) {
        var slot = rows.index(forKey: key)
        if slot == nil {
            rows[key] = ExplorerCellMapBuilder(category: ExplorerCategory(rawValue: key.category))
            slot = rows.index(forKey: key)
        }
        guard let slot else { return }
        for observation in run {
            if let entry = observation.entry {
                rows.values[slot].add(observation.sample, at: entry, ordinal: observation.ordinal)
            } else if let ordinal = observation.ordinal {
                rows.values[slot].add(observation.sample, ordinal: ordinal)
            }
        }
    }
}
