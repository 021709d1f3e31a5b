/// The explorer's cells of one store row: every metric and series of one app, day, version, OS,
/// device and app state, packed in one value (PostgreSQL's `explorer_cells.cells`). One row per
/// device-day cell instead of one per metric: a fold batch reads and writes ~45 times fewer rows.
///
/// Its binary form, and merging it as bytes: `ExplorerCellMap+Encoding.swift`.
package struct ExplorerCellMap: Sendable, Equatable {
    /// A metric and its series.
    package struct Key: Sendable, Hashable, Comparable {
        package var metric: String
        package var subject: String

        package init(metric: String, subject: String) {
            self.metric = metric
            self.subject = subject
        }

        package static func < (a: Key, b: Key) -> Bool { (a.metric, a.subject) < (b.metric, b.subject) }
    }

    /// The most entries a map holds (the catalog has 66 metrics; signposts add series).
    package static let maxEntries = 4_096

    package var cells: [Key: ExplorerCell] = [:]

    package init(_ cells: [Key: ExplorerCell] = [:]) {
        self.cells = cells
    }

    /// Adds one device-day's prepared sample to `entry`'s cell, made if missing (a refused sample,
    /// `nil`, leaves it empty: its metric is still named, on both stores alike).
    package mutating func add(_ sample: ExplorerCell.Prepared?, at entry: Key) {
        if let sample {
            cells[entry, default: ExplorerCell()].add(sample)
        } else if cells[entry] == nil {
            cells[entry] = ExplorerCell()
        }
    }

    /// Adds `other`'s cells to these.
    package mutating func merge(_ other: ExplorerCellMap) {
        for (key, cell) in other.cells { merge(cell, at: key) }
    }

    /// Adds `cell` to `key`'s cell (made if missing).
    package mutating func merge(_ cell: ExplorerCell, at key: Key) {
        if let index = cells.index(forKey: key) {
            cells.values[index].merge(cell)
        } else {
            cells[key] = cell
        }
    }
}
