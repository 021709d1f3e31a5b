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
        Self.add(sample, to: &dense[ordinal - base])
    }

    /// Adds one device-day's prepared sample to the cell of the catalog metric `ordinal`, which
    /// must be of this row's category (no series): ``add(_:at:ordinal:)`` without the key, which
    /// only a series or a metric outside the catalog needs.
    package mutating func add(_ sample: ExplorerCell.Prepared?, ordinal: Int) {
        let slot = ordinal - base
        guard slot >= 0, slot < dense.count else {
            return others.add(sample, at: ExplorerCellMap.Key(metric: ExplorerCatalog.metrics[ordinal].id, subject: ""))
        }
        Self.add(sample, to: &dense[slot])
    }

    /// Adds `sample` to `cell`, made if missing, in place: a cell is never copied out of its slot
    /// (a copy retains and releases its three arrays; comparing the slot with `nil` by `==` made
    /// two, 4 % of the server's time on the fleet-like load, `perf`).
    private static func add(_ sample: ExplorerCell.Prepared?, to cell: inout ExplorerCell?) {
        if case .none = cell { cell = ExplorerCell() }
        if let sample { cell?.add(sample) }
    }

    /// The bytes of ``map``, made without it: the cells kept by ordinal are walked in their ids'
    /// byte order (``ExplorerCatalog/idBytes``), beside the others' entries. Making the map and
    /// sorting its ids was a fifth of the explorer thread's time on the reference load.
    package func encoded() -> [UInt8] {
        let (entries, ascii) = orderedEntries()
        return ascii ? ExplorerCellMap.encode(entries) : map.encoded()
    }

    /// ``ExplorerCellMap/merging(encoded:with:)`` of this row's cells into `stored`.
    package func merged(into stored: some Collection<UInt8>) throws(SketchDecodingError) -> [UInt8] {
        let (entries, ascii) = orderedEntries()
        return try ExplorerCellMap.merging(encoded: stored, with: entries, isASCII: ascii, map: { map })
    }

    /// The row's entries in the encoding's order, and whether every id is ASCII (when not, the
    /// order is not the encoding's: the callers take the map's path).
    private func orderedEntries() -> (entries: [ExplorerCellMap.EncodingEntry], isASCII: Bool) {
        let (others, ascii) = others.orderedEntries()
        guard ascii, ExplorerCatalog.idsAreASCII else { return ([], false) }
        var entries: [ExplorerCellMap.EncodingEntry] = []
        entries.reserveCapacity(others.count + dense.count)
        var next = 0  // in `others`
        for ordinal in ExplorerCatalog.byteOrder where ordinal >= base && ordinal - base < dense.count {
            guard let cell = dense[ordinal - base] else { continue }
            let id = ExplorerCatalog.idBytes[ordinal]
            while next < others.count, ExplorerCellMap.compare(others[next].metric, others[next].subject, id, []) < 0 {
                entries.append(others[next])
                next += 1
            }
            entries.append(ExplorerCellMap.EncodingEntry(id, [], cell, number: ExplorerCatalog.numbers[ordinal]))
        }
        entries.append(contentsOf: others[next...])
        return (entries, true)
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
