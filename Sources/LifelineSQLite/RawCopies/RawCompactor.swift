import Foundation
import LifelineIngest
import LifelineModel
import LifelineStorage

/// Re-deflates stored raw copies against a preset dictionary per app and kind (``RawCopy``,
/// migration 0023): ~1 KB less per payload on the reference load, where the raw copy was 2.7 of
/// the 5.7 KB a payload stores. The work costs ~0.2 ms of CPU per copy, so it stays off the
/// request path: the server's ``RawCompactionWorker`` prepares batches on a low-priority thread
/// behind the fold and the writer applies them when the door is idle; `lifeline compact` does the
/// same offline.
///
/// A batch considers the payloads above `raw_compaction.through`, up to the fold's watermark, in
/// id order. Only gzip copies (every copy ingest stores) and plain JSON are rewritten: one that
/// does not inflate is left as it is, and so is one the dictionary would not shrink by ``minimumSaving`` bytes.
/// A rewritten copy moves to `payload_raw_packed`, whose pages it fills end to end, and leaves
/// its page in `payload_raw` to later inserts (shrunk in place it would leave it half empty). Every rewritten copy
/// is inflated again and compared with the document before it is kept. An app and kind without a
/// dictionary get one made of their newest documents (``RawCopy/dictionary(trainedOn:)``), and a
/// new one when a dictionary made of a later batch keeps 10 % fewer bytes (their documents changed
/// shape: a new format).
struct RawCompactor {
    /// A dictionary as stored in `raw_dictionaries`.
    struct Dictionary: Sendable, Equatable {
        var id: Int64
        var app: Int64
        var kind: String
        var bytes: [UInt8]
        var trainedThrough: Int64
    }

    /// One batch of copies re-deflated, ready to be written (``apply(_:on:)``).
    struct Batch: Sendable {
        /// `raw_compaction.through` when it was read: it is written only over that.
        var after: Int64
        /// The last payload it considered, and how many it considered.
        var through: Int64
        var considered = 0
        /// The dictionaries its copies were deflated against.
        var dictionaries: [Dictionary] = []
        var copies: [(payload: Int64, raw: [UInt8])] = []
        var bytesBefore = 0
        var bytesAfter = 0
        /// Whether it considered nothing (no payload above the watermark and folded).
        var isEmpty: Bool { through == after }
    }

    private struct Key: Hashable {
        var app: Int64
        var kind: String
    }

    /// Payloads a batch considers at most.
    static let batchSize = 128
    /// Documents a dictionary is made of at most, and at least (fewer: no dictionary yet).
    static let trainingDocuments = 16
    static let minimumTraining = 4
    /// Bytes a copy must save to be rewritten.
    static let minimumSaving = 32
    /// At most once per ``retrainDistance`` ids of an app and kind, and when theirs was made from
    /// documents at least that much older, a batch of at least ``trainingDocuments`` of their
    /// documents is deflated against a dictionary made of itself too; the new one replaces the old
    /// when it keeps less than this share of the bytes (a stale legacy dictionary keeps 2,457 bytes
    /// of an iOS 27 report where the report's own keeps 1,661).
    static let retrainGain = 0.9
    static let defaultRetrainDistance: Int64 = 1_000
    var retrainDistance = defaultRetrainDistance
    /// Largest document a copy is compacted from: one that inflates past it stays as it came (a
    /// hostile client may send documents of up to `limits.max_decompressed_bytes`, 32 MiB by
    /// default, each; training reads at most ``trainingDocuments`` of them).
    static let maxDocumentBytes = 8 << 20
    /// The documents a batch holds inflated at once, at most: past it the batch ends early (and
    /// a dictionary's training stops reading older documents).
    static let maxBatchBytes = 32 << 20
    /// Older copies a dictionary is trained on are this small at most (stored bytes).
    static let maxTrainingCopyBytes = 256 << 10

    /// The newest dictionary per app and kind, as known to this compactor, and the last payload
    /// of the last batch that tried a new one.
    private var newest: [Key: Dictionary] = [:]
    private var lastTrial: [Key: Int64] = [:]
    private var loaded = false

    /// Forgets the dictionaries known (another process wrote some).
    mutating func reset() {
        newest = [:]
        loaded = false
    }

    /// Reads the next payloads above the compaction watermark that are folded, in a read
    /// transaction on `reader`, and re-deflates their copies.
    mutating func prepare(on reader: Connection, limit: Int = batchSize) throws(StoreError) -> Batch {
        try reader.execute("BEGIN")
        defer { reader.rollbackQuietly() }
        let after = try reader.first("SELECT through FROM raw_compaction WHERE id = 1") { $0.int64(0) } ?? 0
        let folded = try reader.first(BatchWriter.readWatermark) { $0.int64(0) } ?? 0
        if !loaded {
            let all = try reader.query(
                "SELECT id, app, kind, dictionary, trained_through FROM raw_dictionaries ORDER BY trained_through, id"
            ) {
                Dictionary(
                    id: $0.int64(0), app: $0.int64(1), kind: $0.text(2), bytes: $0.blob(3), trainedThrough: $0.int64(4))
            }
            for dictionary in all { newest[Key(app: dictionary.app, kind: dictionary.kind)] = dictionary }
            loaded = true
        }
        let rows = try reader.query(
            """
            SELECT p.id, p.app, p.kind FROM payloads p WHERE p.id > ? AND p.id <= ? ORDER BY p.id LIMIT ?
            """, [.integer(after), .integer(folded), .integer(Int64(max(1, limit)))]
        ) { (id: $0.int64(0), key: Key(app: $0.int64(1), kind: $0.text(2))) }
        var batch = Batch(after: after, through: after)
        // The documents of the copies that may shrink, per app and kind, in id order.
        var documents: [Key: [(payload: Int64, raw: [UInt8], json: [UInt8])]] = [:]
        var inflated = 0
        for row in rows {
            if inflated >= Self.maxBatchBytes { break }
            batch.through = row.id
            batch.considered += 1
            // One copy read at a time (up to max_body_bytes each), within the batch's bound.
            let raw = try reader.first("SELECT raw FROM payload_raw WHERE payload = ?", [.integer(row.id)]) {
                $0.blob(0)
            }
            guard let raw, RawCopy.isGzip(raw) || RawCopy.isPlainJSON(raw),
                let json = try? RawCopy.json(of: raw, maxBytes: Self.maxDocumentBytes, dictionary: { _ in nil })
            else { continue }
            inflated += json.count
            documents[row.key, default: []].append((row.id, raw, json))
        }
        for (key, group) in documents.sorted(by: { ($0.key.app, $0.key.kind) < ($1.key.app, $1.key.kind) }) {
            if newest[key] == nil {
                newest[key] = try train(key, from: group, on: reader)
            }
            guard var dictionary = newest[key] else { continue }
            var shrunk = compact(group, against: dictionary)
            // The group's bytes as they would be kept (a copy not rewritten as it is).
            let before = group.reduce(0) { $0 + $1.raw.count }
            func kept(_ copies: [(payload: Int64, raw: [UInt8], before: Int)]) -> Int {
                before - copies.reduce(0) { $0 + $1.before - $1.raw.count }
            }
            // Every retrainDistance ids at most, a dictionary made of this group competes with the
            // one in use: their documents may have changed shape (a new format).
            let start = group.first?.payload ?? 0
            if group.count >= Self.trainingDocuments, dictionary.trainedThrough + retrainDistance < start,
                (lastTrial[key] ?? 0) + retrainDistance < start
            {
                lastTrial[key] = group.last?.payload
                if let fresh = try train(key, from: group, on: reader) {
                    let again = compact(group, against: fresh)
                    if Double(kept(again)) < Self.retrainGain * Double(kept(shrunk)) {
                        (dictionary, shrunk) = (fresh, again)
                        newest[key] = fresh
                    }
                }
            }
            guard !shrunk.isEmpty else { continue }
            batch.dictionaries.append(dictionary)
            for copy in shrunk {
                batch.copies.append((copy.payload, copy.raw))
                batch.bytesBefore += copy.before
                batch.bytesAfter += copy.raw.count
            }
        }
        batch.copies.sort { $0.payload < $1.payload }
        return batch
    }

    /// The copies of `group` that shrink by ``minimumSaving`` bytes against `dictionary`, each
    /// checked to inflate back to its document, with their size as received (`before`).
    private func compact(
        _ group: [(payload: Int64, raw: [UInt8], json: [UInt8])], against dictionary: Dictionary
    ) -> [(payload: Int64, raw: [UInt8], before: Int)] {
        var out: [(payload: Int64, raw: [UInt8], before: Int)] = []
        for document in group {
            guard let packed = try? RawCopy.deflate(document.json, dictionary: dictionary.bytes),
                packed.count + Self.minimumSaving <= document.raw.count,
                RawCopy.dictionaryID(packed) == UInt32(truncatingIfNeeded: dictionary.id),
                let back = try? RawCopy.json(
                    of: packed, maxBytes: document.json.count,
                    dictionary: { $0 == UInt32(truncatingIfNeeded: dictionary.id) ? dictionary.bytes : nil }),
                back == document.json
            else { continue }
            out.append((document.payload, packed, document.raw.count))
        }
        return out
    }

    /// A dictionary for `key` made of `group` (the batch's documents, oldest first) and, when
    /// they are too few, the app and kind's documents before them; `nil` when there are fewer
    /// than ``minimumTraining``. Its id (its Adler-32) differs from every stored dictionary's: on
    /// a collision the oldest byte is left out, and again.
    private func train(
        _ key: Key, from group: [(payload: Int64, raw: [UInt8], json: [UInt8])], on reader: Connection
    ) throws(StoreError) -> Dictionary? {
        let first = group.first?.payload ?? 0
        let through = group.last?.payload ?? 0
        var samples = group.suffix(Self.trainingDocuments).map(\.json)
        if samples.count < Self.trainingDocuments {
            // On the rowid, newest first, from where the batch starts (the unary `+` kept SQLite
            // off the (app, kind, day) index `payloads` had until migration 0031, which sorted
            // every document of the app).
            let older = try reader.query(
                """
                SELECT coalesce(r.raw, k.raw) FROM payloads p LEFT JOIN payload_raw r ON r.payload = p.id
                    LEFT JOIN payload_raw_packed k ON k.payload = p.id
                WHERE p.id < ? AND p.id >= ? AND +p.app = ? AND +p.kind = ?
                    AND length(coalesce(r.raw, k.raw)) <= ?
                ORDER BY p.id DESC LIMIT ?
                """,
                [
                    .integer(first), .integer(first - 100_000), .integer(key.app), .text(key.kind),
                    .integer(Int64(Self.maxTrainingCopyBytes)), .integer(Int64(Self.trainingDocuments)),
                ]
            ) { $0.blob(0) }
            var extra: [[UInt8]] = []
            var inflated = samples.reduce(0) { $0 + $1.count }
            for raw in older where samples.count + extra.count < Self.trainingDocuments && inflated < Self.maxBatchBytes
            {
                guard
                    let json = try? RawCopy.json(
                        of: raw, maxBytes: Self.maxDocumentBytes,
                        dictionary: { id in newest.values.first { UInt32(truncatingIfNeeded: $0.id) == id }?.bytes })
                else { continue }
                inflated += json.count
                extra.append(json)
            }
            samples = extra.reversed() + samples
        }
        guard samples.count >= Self.minimumTraining else { return nil }
        var bytes = RawCopy.dictionary(trainedOn: samples)
        while bytes.count > 1 {
            let id = Int64(RawCopy.adler32(bytes))
            let stored = try reader.first("SELECT dictionary FROM raw_dictionaries WHERE id = ?", [.integer(id)]) {
                $0.blob(0)
            }
            let known = newest.values.first { $0.id == id }
            if (stored == nil || stored == bytes) && (known == nil || known?.bytes == bytes) {
                return Dictionary(id: id, app: key.app, kind: key.kind, bytes: bytes, trainedThrough: through)
            }
            bytes.removeFirst()
        }
        return nil
    }

    /// Writes `batch` in one transaction on `writer`: its dictionaries (each checked against the
    /// one stored under its id), its copies (moved from `payload_raw` to `payload_raw_packed`), and
    /// the watermark. `false` (nothing written) when the
    /// watermark moved since the batch was read, or a dictionary id is taken by other bytes:
    /// another process compacted meanwhile (``reset()`` then).
    static func apply(_ batch: Batch, on writer: Connection) throws(StoreError) -> Bool {
        try writer.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let through = try writer.first("SELECT through FROM raw_compaction WHERE id = 1") { $0.int64(0) } ?? 0
            guard through == batch.after else {
                writer.rollbackQuietly()
                return false
            }
            for dictionary in batch.dictionaries {
                _ = try writer.run(
                    """
                    INSERT OR IGNORE INTO raw_dictionaries (id, app, kind, dictionary, trained_through, created_at_ms)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .integer(dictionary.id), .integer(dictionary.app), .text(dictionary.kind),
                        .blob(dictionary.bytes),
                        .integer(dictionary.trainedThrough), .integer(WallClock.nowMilliseconds()),
                    ])
                let stored = try writer.first(
                    "SELECT dictionary FROM raw_dictionaries WHERE id = ?", [.integer(dictionary.id)]
                ) { $0.blob(0) }
                guard stored == dictionary.bytes else {
                    writer.rollbackQuietly()
                    return false
                }
            }
            // Moved to payload_raw_packed (migration 0023), where a copy still is in payload_raw
            // (the pruner may have removed it meanwhile).
            for copy in batch.copies {
                let moved = try writer.run(
                    """
                    INSERT INTO payload_raw_packed (payload, raw)
                    SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM payload_raw WHERE payload = ?1)
                    """, [.integer(copy.payload), .blob(copy.raw)])
                if moved > 0 {
                    _ = try writer.run("DELETE FROM payload_raw WHERE payload = ?", [.integer(copy.payload)])
                }
            }
            _ = try writer.run(
                """
                UPDATE raw_compaction SET through = ?, compacted = compacted + ?, bytes_before = bytes_before + ?,
                    bytes_after = bytes_after + ?
                WHERE id = 1
                """,
                [
                    .integer(batch.through), .integer(Int64(batch.copies.count)), .integer(Int64(batch.bytesBefore)),
                    .integer(Int64(batch.bytesAfter)),
                ])
            try writer.execute("COMMIT")
            return true
        } catch {
            writer.rollbackQuietly()
            throw error
        }
    }
}

/// The preset dictionaries of raw copies (``RawCopy``) read so far, by id, for what decodes
/// copies again: the fold, the refold, `lifeline migrate-data`.
package final class RawDictionaryCache {
    private var known: [UInt32: [UInt8]] = [:]

    package init() {}

    private static let select = "SELECT dictionary FROM raw_dictionaries WHERE id = ?"

    /// The dictionary with Adler-32 `id`, read from `raw_dictionaries` on `connection` the first time.
    func dictionary(_ id: UInt32, on connection: Connection) -> [UInt8]? {
        lookup(id) {
            try? connection.first(Self.select, [.integer(Int64(id))]) { $0.blob(0) }
        }
    }

    /// The dictionary with Adler-32 `id`, read from `database`'s `raw_dictionaries` the first time.
    package func dictionary(_ id: UInt32, in database: Database) -> [UInt8]? {
        lookup(id) {
            guard
                let row = try? database.query(Self.select, [.integer(Int64(id))]).first,
                case .blob(let bytes) = row.first
            else { return nil }
            return bytes
        }
    }

    private func lookup(_ id: UInt32, read: () -> [UInt8]?) -> [UInt8]? {
        if let bytes = known[id] { return bytes }
        guard let bytes = read(), RawCopy.adler32(bytes) == id else { return nil }
        known[id] = bytes
        return bytes
    }
}
