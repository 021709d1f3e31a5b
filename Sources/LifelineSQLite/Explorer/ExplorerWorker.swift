import Foundation
import LifelineAnalysis
import LifelineModel

/// A packed explorer row's key. The version level has no OS and device (both 0 in its keys).
struct ExplorerRowKey: Hashable, Sendable {
    var app: Int64
    var day: Int64
    var version: Int64
    var os: Int64
    var device: Int64
    var appState: String
    /// The category's key (``ExplorerCatalog/categoryKey(ofMetric:)``).
    var category: String

    /// The same cell at the version level.
    var byVersion: ExplorerRowKey {
        var key = self
        key.os = 0
        key.device = 0
        return key
    }

    /// The upsert's key parameters at `level` (``RollupLevel/upsertExplorer``).
    func bindings(_ level: RollupLevel) -> [SQLValue] {
        let dimensions: [Int64] = level == .fine ? [version, os, device] : [version]
        return [.integer(app), .integer(day)] + dimensions.map { .integer($0) } + [
            .text(appState), .text(category),
        ]
    }
}

/// The thread that extracts each folded metric document's explorer observations and adds them to
/// the ``ExplorerStage``'s unwritten rows, beside the writer thread, which meanwhile goes on with
/// the fold's other stages and documents. Extraction and adds were ~45 % of the writer thread's
/// time on a fleet-like load (perf, BENCHMARKS.md): on two cores they now overlap the rest of the
/// fold instead of adding to it.
///
/// **Who touches the rows.** The writer hands documents over in fold order (``submit(_:)``); only
/// this thread reads or changes ``fine`` and ``byVersion`` until the writer calls ``drain()``,
/// which returns once every submitted document is added. The writer reads, writes or clears the
/// rows only after a drain and before its next submit, so the two never touch them at once (the
/// condition's lock orders their memory). That protocol is why the class is `@unchecked Sendable`.
final class ExplorerWorker: @unchecked Sendable {
    /// One released document: its fine row's dimensions (app state and category come from each
    /// observation) and its decoded payload.
    struct Document: Sendable {
        var app: Int64
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64
        var metric: MetricPayload
    }

    /// The rows not written yet, per level. See the class's comment for who may touch them.
    var fine: [ExplorerRowKey: ExplorerCellMapBuilder] = [:]
    var byVersion: [ExplorerRowKey: ExplorerCellMapBuilder] = [:]

    private let condition = NSCondition()
    private var queue: [Document] = []
    private var busy = false
    private var stopping = false
    /// One document's observations, reused (only this thread uses it).
    private var pending: [Pending] = []

    /// One observation of a document: its row, cell and sample, prepared once for both levels
    /// (`nil`: refused; its cell is made empty, as ``ExplorerCellMap/add(_:at:)`` does).
    private struct Pending {
        var key: ExplorerRowKey
        var entry: ExplorerCellMap.Key
        var ordinal: Int?
        var sample: ExplorerCell.Prepared?
    }

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "lifeline-explorer"
        thread.start()
    }

    /// Hands one document over (the writer thread, in fold order).
    func submit(_ document: Document) {
        condition.lock()
        queue.append(document)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every submitted document is added to the rows.
    func drain() {
        condition.lock()
        while busy || !queue.isEmpty { condition.wait() }
        condition.unlock()
    }

    /// Ends the thread once the documents submitted so far are added.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        var documents: [Document] = []
        while true {
            condition.lock()
            while queue.isEmpty, !stopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            swap(&documents, &queue)
            busy = true
            condition.unlock()
            for document in documents { add(document) }
            documents.removeAll(keepingCapacity: true)
            condition.lock()
            busy = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Adds one document's observations to its rows at both levels.
    private func add(_ document: Document) {
        let extraction = ExplorerExtractor.extract(document.metric)
        guard extraction.isDeviceDay, !extraction.observations.isEmpty else { return }
        pending.reserveCapacity(extraction.observations.count)
        for observation in extraction.observations {
            let category =
                observation.ordinal.map { ExplorerCatalog.metrics[$0].category.rawValue }
                ?? String(ExplorerCatalog.categoryKey(ofMetric: observation.metric))
            let key = ExplorerRowKey(
                app: document.app, day: document.day, version: document.version, os: document.os,
                device: document.device, appState: observation.appState, category: category)
            pending.append(
                Pending(
                    key: key, entry: ExplorerCellMap.Key(metric: observation.metric, subject: observation.subject),
                    ordinal: observation.ordinal, sample: ExplorerCell.prepare(observation.sample)))
        }
        // Observations come in runs of one row (a category of an app state): each row is found
        // once per run and level.
        var start = 0
        while start < pending.count {
            let key = pending[start].key
            var end = start + 1
            while end < pending.count, pending[end].key == key { end += 1 }
            Self.add(pending[start..<end], at: key, to: &fine)
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
            rows.values[slot].add(observation.sample, at: observation.entry, ordinal: observation.ordinal)
        }
    }
}
