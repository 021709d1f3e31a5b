import PostgresNIO

/// A number PostgreSQL's binary array format holds in a fixed width (``PackedArray``).
protocol PackedArrayElement: PostgresArrayEncodable {
    /// Bytes per element on the wire.
    static var width: Int32 { get }
    /// Stores the element in network byte order at `offset`.
    func store(into bytes: UnsafeMutableRawBufferPointer, at offset: Int)
}

extension Int32: PackedArrayElement {
    static var width: Int32 { 4 }
    func store(into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes.storeBytes(of: bigEndian, toByteOffset: offset, as: Int32.self)
    }
}

extension Int64: PackedArrayElement {
    static var width: Int32 { 8 }
    func store(into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes.storeBytes(of: bigEndian, toByteOffset: offset, as: Int64.self)
    }
}

extension Double: PackedArrayElement {
    static var width: Int32 { 8 }
    func store(into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes.storeBytes(of: bitPattern.bigEndian, toByteOffset: offset, as: UInt64.self)
    }
}

/// A one-dimensional array of numbers bound in PostgreSQL's binary array format, written in one
/// pass over reserved bytes. postgres-nio's `Array` encoding writes each element through the
/// generic encoder (a length placeholder, the value, the length set): the leader's rollup
/// statements bind ~250 numbers per document, and encoding them took 4 % of a node's CPU
/// (BENCHMARKS.md, "The leader's fold keyed by numbers").
struct PackedArray<Element: PackedArrayElement>: PostgresNonThrowingEncodable {
    var elements: [Element]

    init(_ elements: [Element]) { self.elements = elements }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // Dimensions (0 when empty), no nulls, the element type; then the one dimension's length
        // and lower bound.
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        let width = Int(Element.width)
        let stride = 4 + width
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: elements.count * stride) { bytes in
            var offset = 0
            for element in elements {
                bytes.storeBytes(of: Element.width.bigEndian, toByteOffset: offset, as: Int32.self)
                element.store(into: bytes, at: offset + 4)
                offset += stride
            }
            return offset
        }
    }
}
