import LifelineAnalysis
import LifelineStorage
import NIOCore
import PostgresNIO
import Synchronization

/// Packed cell tables (`exit_cells*`, `signpost_cells*`: per cell, two arrays naming its elements
/// and one of their counts; `bucket_cells*`: per cell, every histogram source's buckets end to end)
/// summed per group in Swift.
///
/// Why not `unnest` and `GROUP BY` in SQL: PostgreSQL's executor pays per element for the unnest,
/// the nested loop and the hash aggregate. Exits by OS and device over 30 days unnest 58,800
/// elements out of 7,350 cells: 25–45 ms of server time. Nor every cell row sent as stored: the
/// client's cost per row (PostgresNIO's decoding, the row's cells) made that read 15 ms. Here the
/// server groups the cells by group and element arrays (`array_agg(counts)`: one two-dimensional
/// array per group and shape, 7 ms for those 7,350 cells, 35 rows sent), and Swift adds each
/// array's rows position by position and decodes the element arrays once per group and shape. A
/// scope of more than ``PackedReadLimit/cells`` cells is read cell by cell (an array is built
/// whole in the server's memory).
extension PostgresReader {
    /// One summed element: the group, the element's two keys, and its count.
    struct PackedSum<A: Hashable, B: Hashable> {
        var key: GroupKey
        var first: A
        var second: B
        var count: Int64
    }

    /// The cells of `table` (`_v` at the version level) in `query`'s scope (and `extra`, with
    /// `binds` in place of the query's), summed per group and element; `arrays` are the element
    /// arrays' columns, `keep` filters elements. Each distinct group and element shape, and each
    /// distinct summed element, counts one row against the read's budget (what the read holds).
    func packedSums<A: PostgresArrayDecodable & Hashable, B: PostgresArrayDecodable & Hashable>(
        _ query: Query, table: String, arrays: (String, String), extra: String? = nil,
        binds: PostgresBindings? = nil, keep: @escaping (A, B) -> Bool = { _, _ in true }
    ) async throws -> [PackedSum<A, B>] where A._DecodableType == A, B._DecodableType == B {
        let budget = ReadBudget.current
        try budget?.checkDeadline()
        let nonEmpty = "cardinality(counts) > 0"
        let inner = query.cellsSQL(
            table, columns: [arrays.0, arrays.1, "counts"], extra: extra.map { "\($0) AND \(nonEmpty)" } ?? nonEmpty)
        let binds = binds ?? query.binds
        // The server groups the cells per group and shape (one two-dimensional array of counts
        // each), over at most `limit` cells: one group's array is built whole in the server's
        // memory and sent as one row. A scope holding more cells is read cell by cell instead.
        let limit = PackedReadLimit.cells
        let columns = (query.keys.map { String($0.prefix { $0 != ":" }) } + [arrays.0, arrays.1]).joined(
            separator: ", ")
        let grouped = """
            SELECT \(columns), array_agg(counts) FROM (\(inner) LIMIT \(limit + 1)) AS c GROUP BY \(columns)
            """
        var cells = 0
        var head = ByteBuffer()
        var shapes: [(head: ByteBuffer, counts: [Int64])] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: grouped, binds: binds), logger: logger)
        {
            // Past the limit the rows are read to their end (LIMIT bounds them) and dropped undecoded.
            guard cells <= limit else { continue }
            guard let array = try Self.head(of: row, keys: query.keys.count + 2, into: &head).first else {
                throw PackedCellError(column: "counts")
            }
            let (rows, counts) = try Self.columnSums(array)
            cells += rows
            if cells <= limit { shapes.append((head, counts)) }
        }
        if cells > limit {
            PackedReadLimit.cellByCellReads.add(1, ordering: .relaxed)
            // Cell by cell: cells of one group with the same element arrays add their counts
            // position by position, keyed on the raw bytes of the group and arrays.
            shapes = []
            var index: [ByteBuffer: Int] = [:]
            for try await row in try await connection.query(
                PostgresQuery(unsafeSQL: inner, binds: binds), logger: logger)
            {
                guard var counts = try Self.head(of: row, keys: query.keys.count + 2, into: &head).first else {
                    throw PackedCellError(column: "counts")
                }
                if let at = index[head] {
                    try Self.add(&counts, into: &shapes[at].counts)
                } else {
                    try budget?.take()
                    index[head] = shapes.count
                    shapes.append(
                        (head, try [Int64](from: &counts, type: .int8Array, format: .binary, context: .default)))
                }
            }
        }
        var sums = PackedSums<A, B>(keys: query.keys.count, budget: budget, keep: keep)
        for (head, counts) in shapes { try sums.add(head, counts, counted: cells > limit) }
        return try sums.sums.rows(query).map {
            PackedSum(key: $0.key, first: $0.element.first, second: $0.element.second, count: $0.count)
        }
    }

    /// The buckets of one histogram source in `query`'s scope, summed per group and bounds, from
    /// `bucket_cells*` (one row per cell holding every source: migration postgres/0019). Each
    /// row's run of the wanted source is found in its raw bytes; nothing else of it is decoded.
    /// Each distinct group and bounds counts one row against the read's budget.
    func bucketSums(_ query: Query, source: String) async throws -> [BucketRow] {
        struct Bounds: Hashable {
            var start: Double
            var end: Double
        }
        var binds = query.binds
        binds.append(source)
        let sql = query.cellsSQL(
            "bucket_cells", columns: ["sources", "lengths", "starts", "ends", "counts"],
            extra: "$\(binds.count) = ANY(sources)")
        let wanted = ByteBuffer(string: source)
        let budget = ReadBudget.current
        try budget?.checkDeadline()
        var sums = GroupedSums<Bounds>(budget: budget)
        var head = ByteBuffer()
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            let rest = try Self.head(of: row, keys: query.keys.count, into: &head)
            guard rest.count == 5 else { throw PackedCellError(column: "sources") }
            var sources = try BinaryArray(rest[0], column: "sources")
            var lengths = try BinaryArray(rest[1], column: "lengths")
            guard lengths.count == sources.count else { throw PackedCellError(column: "lengths") }
            // The wanted source's run: its offset among the buckets and its length.
            var offset = 0
            var length: Int?
            for _ in 0..<sources.count {
                let name = try sources.element()
                let count = Int(try lengths.int32())
                if name == wanted {
                    length = count
                    break
                }
                offset += count
            }
            guard let length else { continue }
            var starts = try BinaryArray(rest[2], column: "starts")
            var ends = try BinaryArray(rest[3], column: "ends")
            var counts = try BinaryArray(rest[4], column: "counts")
            guard length >= 0, offset + length <= starts.count, ends.count == starts.count, counts.count == starts.count
            else { throw PackedCellError(column: "lengths") }
            try starts.skip8(offset)
            try ends.skip8(offset)
            try counts.skip8(offset)
            let group = sums.group(head)
            for _ in 0..<length {
                try sums.add(
                    try counts.int64(), to: Bounds(start: try starts.double(), end: try ends.double()), in: group)
            }
        }
        return try sums.rows(query).map {
            BucketRow(key: $0.key, start: $0.element.start, end: $0.element.end, count: $0.count)
        }
    }

    /// The bytes of `row`'s first `keys` columns, each length-prefixed, in `head` (cleared
    /// first); the other columns' bytes are returned.
    static func head(of row: PostgresRow, keys: Int, into head: inout ByteBuffer) throws -> [ByteBuffer] {
        head.clear()
        var rest: [ByteBuffer] = []
        for cell in row {
            guard var bytes = cell.bytes else { throw PackedCellError(column: cell.columnName) }
            if cell.columnIndex < keys {
                head.writeInteger(Int32(bytes.readableBytes))
                head.writeBuffer(&bytes)
            } else {
                rest.append(bytes)
            }
        }
        return rest
    }

    /// The group key of a head's first fields (``head(of:keys:into:)``, `query`'s keys).
    static func groupKey(_ head: inout ByteBuffer, query: Query) throws -> GroupKey {
        var texts: [String] = []
        for _ in 0..<query.keys.count {
            var field = try field(&head)
            texts.append(field.readString(length: field.readableBytes) ?? "")
        }
        return key(texts, dimensions: query.dimensions)
    }

    /// The bytes of a head's group fields (its first `keys`), read past.
    static func groupBytes(_ head: inout ByteBuffer, keys: Int) throws -> ByteBuffer {
        var probe = head
        for _ in 0..<keys { _ = try field(&probe) }
        guard let bytes = head.readSlice(length: probe.readerIndex - head.readerIndex) else {
            throw PackedCellError(column: "head")
        }
        return bytes
    }

    /// One length-prefixed field of a head.
    static func field(_ bytes: inout ByteBuffer) throws -> ByteBuffer {
        guard let length = bytes.readInteger(as: Int32.self), let field = bytes.readSlice(length: Int(length)) else {
            throw PackedCellError(column: "head")
        }
        return field
    }

    /// The number of rows and the column sums (saturating) of a binary two-dimensional
    /// `bigint[][]` (`array_agg` of one shape's counts: one row per cell).
    static func columnSums(_ bytes: ByteBuffer) throws -> (rows: Int, sums: [Int64]) {
        var elements = try BinaryArray(bytes, column: "counts", dimensions: 2)
        var sums = [Int64](repeating: 0, count: elements.rowLength)
        let rows = sums.isEmpty ? 0 : elements.count / sums.count
        for _ in 0..<rows {
            for position in sums.indices { sums[position].addSaturating(try elements.int64()) }
        }
        return (rows, sums)
    }

    /// Adds a binary one-dimensional `bigint[]` position by position into `sums` (saturating).
    static func add(_ counts: inout ByteBuffer, into sums: inout [Int64]) throws {
        var elements = try BinaryArray(counts, column: "counts")
        guard elements.count == sums.count else { throw PackedCellError(column: "counts") }
        for position in sums.indices { sums[position].addSaturating(try elements.int64()) }
    }
}

/// The counts of packed cells summed per group and element: each distinct group and element shape
/// comes with its counts summed position by position and the bytes of its group columns and
/// element arrays (``PostgresReader/head(of:keys:into:)``), decoded here once.
private struct PackedSums<A: PostgresArrayDecodable & Hashable, B: PostgresArrayDecodable & Hashable>
where A._DecodableType == A, B._DecodableType == B {
    let keys: Int
    let budget: ReadBudget?
    let keep: (A, B) -> Bool
    /// Per group, its elements summed: a group's shapes whose arrays differ can name one element
    /// twice.
    var sums: GroupedSums<PackedPair<A, B>>

    init(keys: Int, budget: ReadBudget?, keep: @escaping (A, B) -> Bool) {
        self.keys = keys
        self.budget = budget
        self.keep = keep
        sums = GroupedSums(budget: budget)
    }

    /// One group and shape (`head`) with its summed `counts`; counts one row against the budget
    /// unless `counted` already.
    mutating func add(_ head: ByteBuffer, _ counts: [Int64], counted: Bool = false) throws {
        if !counted { try budget?.take() }
        var bytes = head
        let group = sums.group(try PostgresReader.groupBytes(&bytes, keys: keys))
        var firstBytes = try PostgresReader.field(&bytes)
        var secondBytes = try PostgresReader.field(&bytes)
        let firsts = try [A](from: &firstBytes, type: .null, format: .binary, context: .default)
        let seconds = try [B](from: &secondBytes, type: .null, format: .binary, context: .default)
        guard firsts.count == counts.count, seconds.count == counts.count else {
            throw PackedCellError(column: "counts")
        }
        for position in counts.indices where keep(firsts[position], seconds[position]) {
            try sums.add(
                counts[position], to: PackedPair(first: firsts[position], second: seconds[position]), in: group)
        }
    }
}

/// How many cells a packed read lets the server group into arrays (``PostgresReader/packedSums``):
/// past it, the read sums the scope's cells one by one as they stream in. A task-local value, so
/// tests can take the cell-by-cell path with a few cells.
package enum PackedReadLimit {
    @TaskLocal package static var cells = 20_000
    /// Reads that went cell by cell since the process started.
    package static let cellByCellReads = Atomic<Int>(0)
}

/// The elements of an array in PostgreSQL's binary format (one dimension, or at most
/// `dimensions`), read in place in row-major order.
struct BinaryArray {
    private var bytes: ByteBuffer
    /// Elements in all.
    let count: Int
    /// Elements per row: the last dimension's length (0 for an empty array).
    let rowLength: Int
    private let column: String

    init(_ bytes: ByteBuffer, column: String, dimensions most: Int32 = 1) throws {
        var bytes = bytes
        guard let (dimensions, _, _) = bytes.readMultipleIntegers(endianness: .big, as: (Int32, Int32, UInt32).self),
            (0...most).contains(dimensions)
        else { throw PackedCellError(column: column) }
        var count = dimensions == 0 ? 0 : 1
        var rowLength = 0
        for _ in 0..<dimensions {
            guard let (length, _) = bytes.readMultipleIntegers(endianness: .big, as: (Int32, Int32).self), length >= 0
            else { throw PackedCellError(column: column) }
            count *= Int(length)
            rowLength = Int(length)
        }
        self.bytes = bytes
        self.count = count
        self.rowLength = rowLength
        self.column = column
    }

    /// The next element's bytes (a null element is malformed here).
    mutating func element() throws -> ByteBuffer {
        guard let length = bytes.readInteger(as: Int32.self), length >= 0,
            let element = bytes.readSlice(length: Int(length))
        else { throw PackedCellError(column: column) }
        return element
    }

    mutating func int64() throws -> Int64 {
        guard let (size, value) = bytes.readMultipleIntegers(endianness: .big, as: (Int32, Int64).self), size == 8
        else { throw PackedCellError(column: column) }
        return value
    }

    mutating func int32() throws -> Int32 {
        guard let (size, value) = bytes.readMultipleIntegers(endianness: .big, as: (Int32, Int32).self), size == 4
        else { throw PackedCellError(column: column) }
        return value
    }

    mutating func double() throws -> Double { Double(bitPattern: UInt64(bitPattern: try int64())) }

    /// Skips `n` elements of 8 bytes (`bigint`, `double precision`).
    mutating func skip8(_ n: Int) throws {
        guard n >= 0, bytes.readableBytes >= n * 12 else { throw PackedCellError(column: column) }
        bytes.moveReaderIndex(forwardBy: n * 12)
    }
}

/// Counts summed per group (the bytes of its columns, ``PostgresReader/head(of:keys:into:)``) and
/// element; each new element counts one row against the read's budget. Groups are kept as bytes
/// and their keys made once, at the end.
private struct GroupedSums<Element: Hashable> {
    let budget: ReadBudget?
    private var index: [ByteBuffer: Int] = [:]
    private var groups: [(columns: ByteBuffer, sums: [Element: Int64])] = []

    init(budget: ReadBudget?) { self.budget = budget }

    /// The group of `columns` (added when new).
    mutating func group(_ columns: ByteBuffer) -> Int {
        if let known = index[columns] { return known }
        index[columns] = groups.count
        groups.append((columns, [:]))
        return groups.count - 1
    }

    /// Adds `count` (saturating) to `element` of `group`.
    mutating func add(_ count: Int64, to element: Element, in group: Int) throws {
        if let sum = groups[group].sums[element] {
            groups[group].sums[element] = sum.addingSaturating(count)
        } else {
            try budget?.take()
            groups[group].sums[element] = count
        }
    }

    /// Every group's elements with the group's key.
    func rows(_ query: PostgresReader.Query) throws -> [(key: GroupKey, element: Element, count: Int64)] {
        var rows: [(key: GroupKey, element: Element, count: Int64)] = []
        rows.reserveCapacity(groups.reduce(0) { $0 + $1.sums.count })
        for (columns, sums) in groups {
            var bytes = columns
            let key = try PostgresReader.groupKey(&bytes, query: query)
            for (element, count) in sums { rows.append((key, element, count)) }
        }
        return rows
    }
}

/// The keys of one summed element of a group.
private struct PackedPair<A: Hashable, B: Hashable>: Hashable {
    var first: A
    var second: B
}

/// A packed cell the writer would not have stored (a null column, arrays of different lengths).
struct PackedCellError: Error, CustomStringConvertible {
    var column: String
    var description: String { "a packed rollup cell has a malformed \(column) column" }
}
