import LifelineIngest
import LifelineModel
import LifelineStorage
import NIOCore
import PostgresNIO

/// The door's statements: a batch of documents appended in three statements.
extension PostgresStore {
    /// Appends one item (its index row and raw copy) unless its content is stored already.
    package static func append(
        _ item: IngestItem, app: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> (Int64, Bool) {
        guard let result = try await append([(app, item)], on: connection, logger: logger).first else {
            throw PostgresStoreError("the append returned nothing")
        }
        return result
    }

    /// Appends `entries` (their index rows and raw copies) in one statement, in the given order
    /// (the caller's lock order; a second reads the ids of documents stored before): one id per
    /// entry, and whether it is new. Of the entries holding one content, the first is new (if no
    /// transaction stored it before) and the others are duplicates of it, as sequential requests
    /// would be.
    static func append(
        _ entries: [(app: Int64, item: IngestItem)], on connection: PostgresConnection, logger: Logger
    ) async throws -> [(Int64, Bool)] {
        guard !entries.isEmpty else { return [] }
        var columns = AppendColumns()
        for (app, item) in entries { columns.add(app: app, item) }
        struct Key: Hashable {
            var app: Int64
            var hash: ByteBuffer
        }
        var inserted: [Key: Int64] = [:]
        let c = columns
        // The raw copies go with the index rows, in one statement: a data-modifying CTE writes
        // the raw copy of each row the insert (`ins`) returned, from the first entry holding its
        // content. Two statements took a round trip more per door transaction.
        let raws = entries.map { ByteBuffer(bytes: $0.item.raw) }
        for try await (id, app, hash) in try await connection.query(
            """
            WITH x AS (
                SELECT * FROM unnest(\(c.apps)::bigint[], \(c.kinds)::text[], \(c.versions)::text[], \(c.builds)::text[],
                    \(c.oses)::text[], \(c.devices)::text[], \(c.regions)::text[], \(c.archs)::text[], \(c.days)::text[],
                    \(c.begins)::bigint[], \(c.ends)::bigint[], \(c.received)::bigint[], \(c.hashes)::bytea[],
                    \(c.formats)::text[], \(c.deviceDays)::boolean[], \(c.unparsed)::bigint[], \(c.dropped)::bigint[],
                    \(raws)::bytea[])
                    WITH ORDINALITY AS x (a, k, v, b, o, d, r, h, y, bg, en, rc, ch, f, dd, u, dr, rw, n)
            ), ins AS (
                INSERT INTO payloads (app, kind, app_version, build, os_version, device_type, region, arch, day,
                    begin_at, end_at, received_at_ms, content_hash, format, device_day, unparsed_measurements,
                    dropped_values)
                SELECT a, k, v, b, o, d, r, h, y::date, NULLIF(bg, \(AppendColumns.none)), NULLIF(en, \(AppendColumns.none)),
                    rc, ch, f, dd, u, dr
                FROM x ORDER BY n
                ON CONFLICT (app, content_hash) DO NOTHING RETURNING id, app, content_hash, day
            ), raw AS (
                INSERT INTO payload_raw (day, payload, raw)
                SELECT DISTINCT ON (ins.id) ins.day, ins.id, x.rw
                FROM ins JOIN x ON x.a = ins.app AND x.ch = ins.content_hash
                ORDER BY ins.id, x.n
            )
            SELECT id, app, content_hash FROM ins
            """, logger: logger
        ).decode((Int64, Int64, ByteBuffer).self) {
            inserted[Key(app: app, hash: hash)] = id
        }
        var known: [Key: Int64] = [:]
        let missing = Set(zip(c.apps, c.hashes).map { Key(app: $0, hash: $1) }).subtracting(inserted.keys)
        if !missing.isEmpty {
            let (apps, hashes) = (missing.map(\.app), missing.map(\.hash))
            for try await (id, app, hash) in try await connection.query(
                """
                SELECT p.id, p.app, p.content_hash FROM payloads p
                JOIN unnest(\(apps)::bigint[], \(hashes)::bytea[]) AS m (a, h) ON p.app = m.a AND p.content_hash = m.h
                """, logger: logger
            ).decode((Int64, Int64, ByteBuffer).self) {
                known[Key(app: app, hash: hash)] = id
            }
        }
        var results: [(Int64, Bool)] = []
        for key in zip(c.apps, c.hashes).map({ Key(app: $0, hash: $1) }) {
            if let id = inserted.removeValue(forKey: key) {
                known[key] = id
                results.append((id, true))
            } else if let id = known[key] {
                results.append((id, false))
            } else {
                throw PostgresStoreError("payload row missing after a conflict")
            }
        }
        return results
    }
}

/// The index rows of appended documents as column arrays, for one `INSERT … SELECT FROM unnest`.
/// Everything about an item was decided by ingest (bounded values); '' stands for unknown.
struct AppendColumns {
    /// Stands for a missing begin or end time in a bigint array (no document has it).
    static let none = Int64.min

    var apps: [Int64] = []
    var kinds: [String] = []
    var versions: [String] = []
    var builds: [String] = []
    var oses: [String] = []
    var devices: [String] = []
    var regions: [String] = []
    var archs: [String] = []
    var days: [String] = []
    var begins: [Int64] = []
    var ends: [Int64] = []
    var received: [Int64] = []
    var hashes: [ByteBuffer] = []
    var formats: [String] = []
    var deviceDays: [Bool] = []
    var unparsed: [Int64] = []
    var dropped: [Int64] = []

    mutating func add(app: Int64, _ item: IngestItem) {
        let meta = item.meta
        apps.append(app)
        kinds.append(item.family.rawValue)
        versions.append(meta.appVersion ?? "")
        builds.append(meta.appBuildVersion ?? "")
        oses.append(meta.osVersion ?? "")
        devices.append(meta.deviceType ?? "")
        regions.append(meta.regionFormat ?? "")
        archs.append(meta.platformArchitecture ?? "")
        days.append(item.day.string)
        begins.append(item.begin?.epochSeconds ?? Self.none)
        ends.append(item.end?.epochSeconds ?? Self.none)
        received.append(item.receivedAt)
        hashes.append(ByteBuffer(bytes: item.contentHash))
        formats.append(item.format.rawValue)
        deviceDays.append(item.isDeviceDay)
        unparsed.append(Int64(max(0, item.document.unparsedMeasurements)))
        dropped.append(Int64(max(0, item.document.droppedValues)))
    }
}
