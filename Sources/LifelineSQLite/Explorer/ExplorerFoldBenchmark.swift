import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineStorage

/// `lifeline bench explorer-fold`: the explorer's fold of metric documents in memory, timed by
/// step on one thread, with the code the ``ExplorerWorker`` runs (``ExplorerRowSet``), no
/// database: what one document costs the explorer's thread before its rows are written.
package enum ExplorerFoldBenchmark {
    /// One pass over the documents.
    package struct Pass: Sendable {
        /// Extracting the observations only.
        package var extract: Duration
        /// Extracting and adding them to the rows of both levels (the worker's job per document:
        /// a row's observations are kept as bytes, ``ExplorerPendingRow``).
        package var add: Duration
        /// Replaying every row's observations into its cells (what a prepare does first).
        package var replay: Duration
        /// Encoding every row made (what a write of rows that are new costs).
        package var encode: Duration
        /// Replaying and encoding every row as a prepare writes a new row: a row of one sample per
        /// metric straight from its bytes (``ExplorerPendingRow/encodedAlone(category:)``), the
        /// others replayed into their builders and encoded.
        package var asNew: Duration
        /// Merging every row made into its encoded self, from its bytes
        /// (``ExplorerCellMapBuilder/merged(into:)``): what a prepare costs for rows that are
        /// stored already (every version row, on most loads).
        package var merge: Duration
        /// Merging the version rows of the second half of the documents into the first half's,
        /// encoded (what a seal's prepare does with a version row: new device-days into a stored
        /// row of many), and how many rows that merged.
        package var versionMerge: (time: Duration, rows: Int)
        package var documents: Int
        package var observations: Int
        package var fineRows: Int
        package var versionRows: Int
        /// The rows' observations held as bytes, per level (``ExplorerPendingRow/byteCount``).
        package var pendingBytes: (fine: Int, byVersion: Int)
    }

    /// Times `items`' metric documents once per step. Versions, OS versions and devices are
    /// numbered as a store interns them; the app is one.
    package static func run(_ items: [IngestItem]) throws(StoreError) -> Pass {
        var ids: [String: Int64] = [:]
        func id(_ name: String) -> Int64 {
            if let id = ids[name] { return id }
            let id = Int64(ids.count + 1)
            ids[name] = id
            return id
        }
        var documents: [ExplorerWorker.Document] = []
        for item in items {
            guard case .metric(let metric) = item.document.content, metric.isDeviceDay else { continue }
            documents.append(
                ExplorerWorker.Document(
                    app: 1, day: RollupDeltas.day(epochSeconds: item.occurredAt),
                    version: id("v" + (metric.meta.appVersion ?? "")),
                    os: id("o" + (metric.meta.osVersion ?? "")), device: id("d" + (metric.meta.deviceType ?? "")),
                    metric: metric))
        }
        let clock = ContinuousClock()
        var observations = 0
        let extract = clock.measure {
            for document in documents { observations &+= ExplorerExtractor.extract(document.metric).observations.count }
        }
        var rows = ExplorerRowSet()
        let add = clock.measure {
            for document in documents { rows.add(document) }
        }
        var builders: [ExplorerCellMapBuilder] = []
        builders.reserveCapacity(rows.fine.count + rows.byVersion.count)
        var replayError: StoreError?
        let replay = clock.measure {
            do throws(StoreError) {
                for (key, row) in rows.fine { builders.append(try row.builder(for: key)) }
                for (key, row) in rows.byVersion { builders.append(try row.builder(for: key)) }
            } catch {
                replayError = error
            }
        }
        if let replayError { throw replayError }
        var newBytes = 0
        let asNew = clock.measure {
            for (key, row) in rows.fine { newBytes &+= ((try? row.encoded(for: key)) ?? []).count }
            for (key, row) in rows.byVersion { newBytes &+= ((try? row.encoded(for: key)) ?? []).count }
        }
        var bytes = 0
        var stored: [[UInt8]] = []
        stored.reserveCapacity(builders.count)
        let encode = clock.measure {
            for builder in builders { stored.append(builder.encoded()) }
        }
        let merge = clock.measure {
            for (builder, cells) in zip(builders, stored) {
                bytes &+= ((try? builder.merged(into: cells)) ?? []).count
            }
        }
        let versionMerge = try Self.versionMerge(documents, clock: clock)
        // The same bytes either way (a test checks it row by row).
        guard newBytes == stored.reduce(0, { $0 + $1.count }) else {
            throw StoreError(.internal, "internal storage error", cause: "rows encoded as new differ in size")
        }
        return Pass(
            extract: extract, add: add, replay: replay, encode: encode, asNew: asNew, merge: merge,
            versionMerge: versionMerge,
            documents: documents.count,
            observations: observations,
            fineRows: rows.fine.count, versionRows: rows.byVersion.count,
            pendingBytes: (
                rows.fine.values.reduce(0) { $0 + $1.byteCount }, rows.byVersion.values.reduce(0) { $0 + $1.byteCount }
            ))
    }

    /// The version rows of `documents`' second half merged into the first half's.
    private static func versionMerge(
        _ documents: [ExplorerWorker.Document], clock: ContinuousClock
    ) throws(StoreError) -> (time: Duration, rows: Int) {
        var halves = (ExplorerRowSet(), ExplorerRowSet())
        for (n, document) in documents.enumerated() {
            if n < documents.count / 2 { halves.0.add(document) } else { halves.1.add(document) }
        }
        var pairs: [(ExplorerCellMapBuilder, [UInt8])] = []
        for (key, row) in halves.1.byVersion {
            guard let stored = halves.0.byVersion[key] else { continue }
            pairs.append((try row.builder(for: key), try stored.encoded(for: key)))
        }
        var bytes = 0
        let time = clock.measure {
            for (builder, stored) in pairs { bytes &+= ((try? builder.merged(into: stored)) ?? []).count }
        }
        guard pairs.isEmpty || bytes > 0 else {
            throw StoreError(.internal, "internal storage error", cause: "version rows merged into nothing")
        }
        return (time, pairs.count)
    }
}
