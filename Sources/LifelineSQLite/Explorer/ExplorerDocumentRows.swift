import LifelineAnalysis
import LifelineIngest
import LifelineModel

/// One metric document's explorer rows before its cell's ids are known: per app state and
/// category, the cells of its observations (``ExplorerExtractor``), and their encoding.
///
/// ``IngestWriter/submit(_:)`` makes them on the request's own task, beside the writer thread,
/// so that thread only files them under their keys (``ExplorerStage``) and writes the encoded
/// bytes of a row no other document of the batch shares. A document folded from its raw copy
/// (after a restart, a refold) has none: the stage makes them itself, unencoded.
struct ExplorerDocumentRows: Sendable {
    struct Row: Sendable {
        var appState: String
        var category: Substring
        var cells: ExplorerCellMap
        /// `cells.encoded()` when made with them.
        var encoded: [UInt8]?
    }

    var rows: [Row] = []

    /// `nil` for a document that is no device-day's metrics, or has no explorer observation.
    init?(_ item: IngestItem, encode: Bool) {
        guard case .metric(let metric) = item.document.content else { return nil }
        let extraction = ExplorerExtractor.extract(metric)
        guard extraction.isDeviceDay, !extraction.observations.isEmpty else { return nil }
        for observation in extraction.observations {
            let category = ExplorerCatalog.categoryKey(ofMetric: observation.metric)
            // A handful of rows (a category per app state): a linear search.
            let index =
                rows.firstIndex { $0.category == category && $0.appState == observation.appState }
                ?? {
                    rows.append(Row(appState: observation.appState, category: category, cells: ExplorerCellMap()))
                    return rows.count - 1
                }()
            let entry = ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject)
            rows[index].cells.cells[entry, default: ExplorerCell()].add(observation.sample)
        }
        if encode {
            for index in rows.indices { rows[index].encoded = rows[index].cells.encoded() }
        }
    }
}
