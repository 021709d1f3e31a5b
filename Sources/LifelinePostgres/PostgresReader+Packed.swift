import LifelineAnalysis
import LifelineStorage
import NIOCore
import PostgresNIO

/// Packed cell tables (`exit_cells*`, `signpost_cells*`, `bucket_cells*`: per cell, two arrays
/// naming its elements and one of their counts) summed per group in Swift.
///
/// Why not `unnest` and `GROUP BY` in SQL: PostgreSQL's executor pays per element for the unnest,
/// the nested loop and the hash aggregate. Exits by OS and device over 30 days unnest 58,800
/// elements out of 7,350 cells: 25–45 ms of server time. Here each cell row arrives as it is
/// stored; cells of one group with the same element arrays (the common case: a cell keeps its
/// elements in key order) add their counts position by position, keyed on their raw bytes, and
/// the element arrays are decoded once per distinct group and shape.
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
        binds: PostgresBindings? = nil, keep: (A, B) -> Bool = { _, _ in true }
    ) async throws -> [PackedSum<A, B>] where A._DecodableType == A, B._DecodableType == B {
        let keyCount = query.keys.count
        let sql = query.cellsSQL(table, columns: [arrays.0, arrays.1, "counts"], extra: extra)
        let budget = ReadBudget.current
        try budget?.checkDeadline()
        // Per distinct bytes of (group columns, element arrays): the summed counts.
        var index: [ByteBuffer: Int] = [:]
        var shapes: [(head: ByteBuffer, counts: [Int64])] = []
        var head = ByteBuffer()
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: sql, binds: binds ?? query.binds), logger: logger)
        for try await row in rows {
            head.clear()
            var counts: ByteBuffer?
            for cell in row {
                guard var bytes = cell.bytes else { throw PackedCellError(column: cell.columnName) }
                if cell.columnIndex == keyCount + 2 {
                    counts = bytes
                } else {
                    head.writeInteger(Int32(bytes.readableBytes))
                    head.writeBuffer(&bytes)
                }
            }
            guard var counts else { throw PackedCellError(column: "counts") }
            if let at = index[head] {
                try Self.add(&counts, into: &shapes[at].counts)
            } else {
                try budget?.take()
                index[head] = shapes.count
                shapes.append((head, try [Int64](from: &counts, type: .int8Array, format: .binary, context: .default)))
            }
        }
        // A group's shapes whose arrays differ can name one element twice: merged here.
        var sums: [PackedKey<A, B>: Int64] = [:]
        for (head, counts) in shapes {
            var bytes = head
            var texts: [String] = []
            for _ in 0..<keyCount {
                var field = try Self.field(&bytes)
                texts.append(field.readString(length: field.readableBytes) ?? "")
            }
            var firstBytes = try Self.field(&bytes)
            var secondBytes = try Self.field(&bytes)
            let firsts = try [A](from: &firstBytes, type: .null, format: .binary, context: .default)
            let seconds = try [B](from: &secondBytes, type: .null, format: .binary, context: .default)
            guard firsts.count == counts.count, seconds.count == counts.count else {
                throw PackedCellError(column: "counts")
            }
            let key = Self.key(texts, dimensions: query.dimensions)
            for position in counts.indices where keep(firsts[position], seconds[position]) {
                let element = PackedKey(key: key, first: firsts[position], second: seconds[position])
                if let sum = sums[element] {
                    sums[element] = sum.addingSaturating(counts[position])
                } else {
                    try budget?.take()
                    sums[element] = counts[position]
                }
            }
        }
        return sums.map { PackedSum(key: $0.key.key, first: $0.key.first, second: $0.key.second, count: $0.value) }
    }

    /// One length-prefixed field of a shape's head.
    private static func field(_ bytes: inout ByteBuffer) throws -> ByteBuffer {
        guard let length = bytes.readInteger(as: Int32.self), let field = bytes.readSlice(length: Int(length)) else {
            throw PackedCellError(column: "head")
        }
        return field
    }

    /// Adds a binary one-dimensional `bigint[]` position by position into `sums` (saturating).
    static func add(_ counts: inout ByteBuffer, into sums: inout [Int64]) throws {
        guard let (dimensions, _, _) = counts.readMultipleIntegers(endianness: .big, as: (Int32, Int32, UInt32).self)
        else { throw PackedCellError(column: "counts") }
        guard dimensions == 1,
            let (length, _) = counts.readMultipleIntegers(endianness: .big, as: (Int32, Int32).self),
            Int(length) == sums.count
        else {
            // An empty array adds nothing; any other shape is not what the writer stores.
            if dimensions == 0, sums.isEmpty { return }
            throw PackedCellError(column: "counts")
        }
        for position in sums.indices {
            guard let (size, value) = counts.readMultipleIntegers(endianness: .big, as: (Int32, Int64).self), size == 8
            else { throw PackedCellError(column: "counts") }
            sums[position].addSaturating(value)
        }
    }
}

/// The key of one summed element.
private struct PackedKey<A: Hashable, B: Hashable>: Hashable {
    var key: GroupKey
    var first: A
    var second: B
}

/// A packed cell the writer would not have stored (a null column, arrays of different lengths).
struct PackedCellError: Error, CustomStringConvertible {
    var column: String
    var description: String { "a packed rollup cell has a malformed \(column) column" }
}
