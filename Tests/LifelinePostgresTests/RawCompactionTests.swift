import Crypto
import Foundation
import LifelineIngest
import LifelineModel
import LifelineSimulator
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Testing

/// Raw copies deflated against a preset dictionary per app and kind (migration 0023): the format,
/// the offline compaction, the server's own behind the fold, and figures rebuilt from them.
@Suite("Raw copies compacted")
struct RawCompactionTests {
    /// A document shaped like MetricKit's JSON, different in its numbers each time.
    static func document(_ index: Int) -> [UInt8] {
        let json = """
            {"appVersion":"4.\(index % 7).0","timeStampBegin":"2026-10-0\(1 + index % 9) 00:00:00 +0000",\
            "metaData":{"osVersion":"iPhone OS 17.\(index % 5) (21E\(100 + index))","deviceType":"iPhone15,\(index % 4)"},\
            "applicationLaunchMetrics":{"histogrammedTimeToFirstDrawKey":{"histogramNumBuckets":3,"histogramValue":\
            {"0":{"bucketStart":"\(index) ms","bucketEnd":"\(index + 10) ms","bucketCount":\(index * 7 % 50)}}}},\
            "cpuMetrics":{"cumulativeCPUTime":"\(index * 31) sec"}}
            """
        return Array(json.utf8)
    }

    @Test("a copy deflated against a dictionary names it, reads back only with it, and refuses damage and excess")
    func format() throws {
        #expect(RawCopy.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        let dictionary = RawCopy.dictionary(trainedOn: (0..<20).map(Self.document))
        #expect(dictionary.count <= RawCopy.dictionarySize && !dictionary.isEmpty)
        let json = Self.document(99)
        let packed = try RawCopy.deflate(json, dictionary: dictionary)
        let id = RawCopy.adler32(dictionary)
        #expect(RawCopy.dictionaryID(packed) == id)
        #expect(!RawCopy.isGzip(packed))
        let plain = try RawCopy.deflate(json, dictionary: [0x20])
        #expect(packed.count < plain.count, "the dictionary is what shrinks it: \(packed.count) vs \(plain.count)")

        let lookup: (UInt32) -> [UInt8]? = { $0 == id ? dictionary : nil }
        #expect(try RawCopy.json(of: packed, maxBytes: 1 << 20, dictionary: lookup) == json)
        // Plain JSON reads as it is; the dictionary is asked for only by a copy that names one.
        #expect(try RawCopy.json(of: json, maxBytes: json.count, dictionary: { _ in nil }) == json)
        #expect(throws: RawCopy.Failure.self) {
            try RawCopy.json(of: json, maxBytes: json.count - 1, dictionary: { _ in nil })
        }
        #expect(RawCopy.dictionaryID(json) == nil)
        #expect(
            RawCopy.isPlainJSON(Array(" \n[".utf8)) && RawCopy.isPlainJSON(json) && !RawCopy.isPlainJSON([9, 8, 7]))

        #expect(throws: RawCopy.Failure.self) {
            try RawCopy.json(of: packed, maxBytes: 1 << 20, dictionary: { _ in nil })
        }
        #expect(throws: RawCopy.Failure.self) {
            try RawCopy.json(of: packed, maxBytes: 1 << 20, dictionary: { _ in Array(dictionary.dropFirst()) })
        }
        #expect(throws: RawCopy.Failure.self) {
            try RawCopy.json(of: Array(packed.prefix(packed.count / 2)), maxBytes: 1 << 20, dictionary: lookup)
        }
        #expect(throws: RawCopy.Failure.self) {
            try RawCopy.json(of: packed, maxBytes: json.count - 1, dictionary: lookup)
        }
        var flipped = packed
        flipped[packed.count / 2] ^= 0xFF
        #expect(throws: RawCopy.Failure.self) { try RawCopy.json(of: flipped, maxBytes: 1 << 20, dictionary: lookup) }
    }

    /// Every payload's document, read from its raw copy as stored (inflated against its dictionary
    /// when it names one), by payload id.
    static func documents(_ database: Database) throws -> [Int64: [UInt8]] {
        var dictionaries: [UInt32: [UInt8]] = [:]
        for row in try database.query("SELECT id, dictionary FROM raw_dictionaries") {
            guard case .integer(let id) = row[0], case .blob(let bytes) = row[1] else { continue }
            dictionaries[UInt32(id)] = bytes
        }
        var out: [Int64: [UInt8]] = [:]
        for row in try database.query(
            "SELECT payload, raw FROM payload_raw UNION ALL SELECT payload, raw FROM payload_raw_packed")
        {
            guard case .integer(let id) = row[0], case .blob(let raw) = row[1] else { continue }
            out[id] = try RawCopy.json(of: raw, maxBytes: 1 << 26) { dictionaries[$0] }
        }
        return out
    }

    static func rawBytes(_ database: Database) throws -> Int64 {
        let sum = try database.query(
            "SELECT (SELECT total(length(raw)) FROM payload_raw) + (SELECT total(length(raw)) FROM payload_raw_packed)")
        guard case .real(let bytes) = sum[0][0] else { return 0 }
        return Int64(bytes)
    }

    /// Pages of a table (dbstat).
    static func pages(_ database: Database, _ table: String) throws -> Int64 {
        guard case .integer(let pages) = try database.query("SELECT count(*) FROM dbstat WHERE name = '\(table)'")[0][0]
        else { return 0 }
        return pages
    }

    @Test("compacting offline shrinks the copies, keeps every document byte for byte, and a refold answers as before")
    func offline() async throws {
        let items = try PostgresStoreTests.items(devices: 30, days: 3)
        let sqlite = try TemporaryDatabase(options: Self.withoutServerCompaction)
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(items, into: writer)
        }
        let folded = try await PostgresStoreTests.Figures.read(sqlite.database)
        let before = try Self.documents(sqlite.database)
        let bytesBefore = try Self.rawBytes(sqlite.database)
        let pagesBefore = try Self.pages(sqlite.database, "payload_raw")
        #expect(before.count == items.count)

        let report = try sqlite.database.compactRawCopies(batch: 50)
        #expect(report.considered == items.count)
        #expect(report.compacted > items.count * 3 / 4, "\(report)")
        // The metric documents' dictionary: the 3 diagnostics are too few to make one of their own
        // (RawCompactor.minimumTraining), and stay as they came.
        #expect(items.filter { $0.family == .diagnostic }.count < 4)
        #expect(report.dictionaries == 1)
        let bytesAfter = try Self.rawBytes(sqlite.database)
        #expect(bytesBefore - bytesAfter == Int64(report.bytesBefore - report.bytesAfter))
        #expect(Double(bytesAfter) < 0.8 * Double(bytesBefore), "\(bytesBefore) → \(bytesAfter)")
        #expect(try Self.documents(sqlite.database) == before)
        // The copies moved: their pages are free for later inserts, the new table's are full.
        let pagesAfter =
            try Self.pages(sqlite.database, "payload_raw") + Self.pages(sqlite.database, "payload_raw_packed")
        #expect(Double(pagesAfter) < 0.8 * Double(pagesBefore), "\(pagesBefore) → \(pagesAfter) pages")

        // Nothing left to do: a second run considers nothing and rewrites nothing.
        let again = try sqlite.database.compactRawCopies()
        #expect(again.considered == 0 && again.compacted == 0 && again.totalCompacted == report.compacted)

        // The figures rebuilt from the compacted copies equal the fold's.
        let refold = try sqlite.database.refold()
        #expect(refold.unreadable == 0)
        let refolded = try await PostgresStoreTests.Figures.read(sqlite.database)
        #expect(refolded == folded, "differ: \(AggregatorTests.differences(refolded, folded))")
        #expect(try sqlite.database.integrityCheck() == "ok")
    }

    @Test("a copy past the compactor's bound per document stays as it came, and the rest of its batch compacts")
    func boundedPerDocument() async throws {
        var items = try PostgresStoreTests.items(devices: 20, days: 1, seed: 3)
        // A document of 9 MiB (allowed by a raised limits.max_decompressed_bytes): 8 MiB at most
        // are inflated at once for a compaction.
        let huge = Array("{\"pad\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 9 << 20) + Array("\"}".utf8)
        let index = try #require(items.indices.first { $0 >= items.count / 2 && items[$0].family == .metric })
        items[index].raw = huge
        // Diagnostics too few for a dictionary of their own stay as they came too.
        let diagnostics = items.filter { $0.family == .diagnostic }.count
        #expect(diagnostics < RawCompactionTests.minimumTraining)
        let sqlite = try TemporaryDatabase(options: Self.withoutServerCompaction)
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(items, into: writer)
        }
        let report = try sqlite.database.compactRawCopies()
        #expect(report.considered == items.count && report.compacted == items.count - 1 - diagnostics, "\(report)")
        let left = try sqlite.database.query(
            "SELECT length(r.raw) FROM payload_raw r JOIN payloads p ON p.id = r.payload WHERE p.kind = 'metric'")
        #expect(left == [[.integer(Int64(huge.count))]])
    }

    /// Metric documents of a simulated fleet in one format, their raw copies plain JSON.
    static func metrics(_ format: PayloadFormatChoice, devices: Int, days: Int, seed: UInt64) throws -> [IngestItem] {
        var config = SimulationConfig(
            bundleIdentifier: PostgresStoreTests.app, days: days, startDay: SimulationConfig.day(from: "2026-10-01"))
        config.devices = devices
        config.seed = seed
        config.format = format
        let simulation = try Simulation(config)
        return try (0..<simulation.deviceDayCount).flatMap { simulation.deviceDay(at: $0).payloads }
            .filter { $0.kind == .metric }
            .map { payload in
                let documents = try MetricKitDecoder.decode(payload.json, family: .metric)
                return IngestItem(
                    app: PostgresStoreTests.app, document: documents[0],
                    contentHash: Array(SHA256.hash(data: payload.json)), raw: payload.json,
                    receivedAt: 1_790_000_000_000)
            }
    }

    @Test("an app's documents changing format get a dictionary of their own, and every copy reads back")
    func newFormatNewDictionary() async throws {
        let legacy = try Self.metrics(.v1, devices: 40, days: 3, seed: 13)
        let reports = Array(try Self.metrics(.v2, devices: 40, days: 1, seed: 14).prefix(32))
        #expect(legacy.count > 100 && reports.count == 32)
        let sqlite = try TemporaryDatabase(options: Self.withoutServerCompaction)
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(legacy, into: writer, chunk: 50)
        }
        // One dictionary, made of the first batch (ids up to 32).
        let first = try sqlite.database.compactRawCopies(batch: 32)
        #expect(first.dictionaries == 1 && first.compacted == legacy.count, "\(first)")
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(reports, into: writer, chunk: 50)
        }
        // The reports' batch may try a new dictionary 60 ids after the last one was made (the
        // server: 1,000), and keeps it: it shrinks reports far more than the legacy one.
        let second = try sqlite.database.compactRawCopies(batch: 32, retrainDistance: 60)
        #expect(second.dictionaries == 2 && second.compacted == reports.count, "\(second)")
        // The same reports against the legacy dictionary alone keep more bytes.
        let stale = try TemporaryDatabase(options: Self.withoutServerCompaction)
        try await IngestWriter.withWriter(database: stale.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(legacy + reports, into: writer, chunk: 50)
        }
        let once = try stale.database.compactRawCopies(batch: 32)
        #expect(once.dictionaries == 1)
        let reportBytes = { (database: Database) throws -> Int64 in
            let sum = try database.query(
                "SELECT total(length(raw)) FROM payload_raw_packed WHERE payload > ?", [.integer(Int64(legacy.count))])
            guard case .real(let bytes) = sum[0][0] else { return 0 }
            return Int64(bytes)
        }
        #expect(try reportBytes(sqlite.database) < reportBytes(stale.database) * 9 / 10)
        let documents = try Self.documents(sqlite.database)
        #expect(documents.count == legacy.count + reports.count)
        #expect(Set(documents.values) == Set((legacy + reports).map(\.raw)))
    }

    @Test("two compactions at once (a server and the command) leave every document readable and count each copy once")
    func concurrent() async throws {
        let items = try PostgresStoreTests.items(devices: 30, days: 2, seed: 11)
        let sqlite = try TemporaryDatabase(options: Self.withoutServerCompaction)
        try await IngestWriter.withWriter(database: sqlite.database, logger: PostgresStoreTests.quiet) { writer in
            try await AggregatorTests.ingest(items, into: writer)
        }
        let before = try Self.documents(sqlite.database)
        let database = sqlite.database
        async let first = Task.detached { try database.compactRawCopies(batch: 16) }.value
        async let second = Task.detached { try database.compactRawCopies(batch: 16) }.value
        let reports = try await [first, second]
        #expect(reports.map(\.considered).reduce(0, +) == items.count)
        let totals = try database.query("SELECT through, compacted FROM raw_compaction")[0]
        #expect(totals[1] == .integer(Int64(reports.map(\.compacted).reduce(0, +))))
        #expect(try Self.documents(database) == before)
        #expect(try database.integrityCheck() == "ok")
    }

    @Test("the writer compacts behind its fold when the door is idle, and a refold reads the compacted copies")
    func behindTheFold() async throws {
        let items = try PostgresStoreTests.items(devices: 30, days: 2, seed: 5)
        let sqlite = try TemporaryDatabase()
        #expect(sqlite.database.options.rawCompaction)
        let database = sqlite.database
        let before = try await IngestWriter.withWriter(database: database, logger: PostgresStoreTests.quiet) {
            writer in
            try await AggregatorTests.ingest(items, into: writer)
            let head = try #require(try database.query("SELECT max(id) FROM payloads").first?.first)
            let deadline = ContinuousClock.now + .seconds(60)
            while try database.query("SELECT through FROM raw_compaction")[0][0] != head {
                #expect(ContinuousClock.now < deadline, "the compaction did not reach the fold's watermark")
                if ContinuousClock.now >= deadline { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try Self.rawBytes(database)
        }
        let compacted = try database.query("SELECT count(*) FROM payload_raw_packed")[0][0]
        guard case .integer(let count) = compacted else { throw StoreError(.internal, "no count") }
        #expect(count > items.count * 3 / 4, "\(count) of \(items.count) copies compacted")
        #expect(try database.compactRawCopies().considered == 0, "the server left nothing to compact")
        #expect(before < items.reduce(0) { $0 + Int64($1.raw.count) } * 8 / 10)

        let folded = try await PostgresStoreTests.Figures.read(database)
        let refold = try database.refold()
        #expect(refold.unreadable == 0 && refold.documents == items.filter { $0.family == .metric }.count)
        let refolded = try await PostgresStoreTests.Figures.read(database)
        #expect(refolded == folded, "differ: \(AggregatorTests.differences(refolded, folded))")
    }

    /// RawCompactor's fewest documents for a dictionary.
    static let minimumTraining = 4

    static var withoutServerCompaction: Database.Options {
        var options = Database.Options()
        options.rawCompaction = false
        return options
    }
}
