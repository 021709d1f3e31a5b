/// One packed row's cells (an ``ExplorerCellMap``) while a fold adds observations to them.
///
/// The cells of the row's category's metrics are kept in an array by ordinal
/// (``ExplorerCatalog/ordinalRanges``), so adding an observation is an index, not the hash and
/// compare of its metric id a map's dictionary takes (~60 observations a document, at two levels:
/// SQLite's explorer thread, PostgreSQL's folding leader). A series (a signpost's `subject`) or a metric outside the catalog goes
/// to a dictionary as in the map. ``map`` gives the same ``ExplorerCellMap`` adding each sample to a
/// map with ``ExplorerCellMap/add(_:at:)`` gives.
package struct ExplorerCellMapBuilder: Sendable {
    /// The ordinal of `dense[0]`.
    private let base: Int
    private var dense: [ExplorerCell?]
    /// Series and metrics kept by key, as in a map.
    private var others = ExplorerCellMap()

    /// An empty row of `category`'s metrics (`nil`: none is kept by ordinal).
    package init(category: ExplorerCategory?) {
        let range = category.flatMap { ExplorerCatalog.ordinalRanges[$0] } ?? 0..<0
        base = range.lowerBound
        dense = Array(repeating: nil, count: range.count)
    }

    /// Adds one device-day's prepared sample to `entry`'s cell, made if missing (a refused sample,
    /// `nil`, leaves it empty), as ``ExplorerCellMap/add(_:at:)`` does. `ordinal` is `entry`'s
    /// metric's (``ExplorerObservation/ordinal``).
    package mutating func add(_ sample: ExplorerCell.Prepared?, at entry: ExplorerCellMap.Key, ordinal: Int?) {
        guard entry.subject.isEmpty, let ordinal, ordinal >= base, ordinal - base < dense.count else {
            return others.add(sample, at: entry)
        }
        let slot = ordinal - base
        if dense[slot] == nil { dense[slot] = ExplorerCell() }
        // Mutated in place (optional chaining), never copied out: a copy would copy its arrays.
        if let sample { dense[slot]?.add(sample) }
    }

    /// The row's cells as a map.
    package var map: ExplorerCellMap {
        var map = others
        for (offset, cell) in dense.enumerated() {
            guard let cell else { continue }
            map.merge(cell, at: ExplorerCellMap.Key(metric: ExplorerCatalog.metrics[base + offset].id, subject: ""))
        }
        return map
    }
}
