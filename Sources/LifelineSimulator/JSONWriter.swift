/// A minimal JSON text writer: keys in the order written (so output is byte-stable), compact,
/// strings escaped per RFC 8259. Callers nest with ``object(_:)`` / ``array(_:)``.
package struct JSONWriter: Sendable {
    /// The UTF-8 text written so far.
    package private(set) var bytes: [UInt8] = []
    /// One entry per open container: whether a value has been written in it yet.
    private var needsComma: [Bool] = [false]

    /// An empty writer; `capacity` reserves bytes.
    package init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)],
                ])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeKey(_ key: String?) {
        separate()
        if let key {
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Writes an object (as a member `key`, or as an array element / the root when `key` is nil).
    package mutating func object(_ key: String? = nil, _ body: (inout JSONWriter) -> Void) {
        writeKey(key)
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes an array (as a member `key`, or as an element / the root when `key` is nil).
    package mutating func array(_ key: String? = nil, _ body: (inout JSONWriter) -> Void) {
        writeKey(key)
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes a string value.
    package mutating func string(_ key: String?, _ value: String) {
        writeKey(key)
        writeString(value)
    }

    /// Writes an integer value.
    package mutating func int(_ key: String?, _ value: Int64) {
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes an unsigned integer value (frame addresses need 64 bits).
    package mutating func uint(_ key: String?, _ value: UInt64) {
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes a number with three decimals from thousandths (`1234` → `1.234`), byte-stable.
    package mutating func thousandths(_ key: String?, _ value: Int64) {
        writeKey(key)
        let sign = value < 0 ? "-" : ""
        let magnitude = value.magnitude
        let fraction = String(magnitude % 1000)
        let padded = String(repeating: "0", count: 3 - fraction.count) + fraction
        bytes.append(contentsOf: "\(sign)\(magnitude / 1000).\(padded)".utf8)
    }

    /// Writes a boolean value.
    package mutating func bool(_ key: String?, _ value: Bool) {
        writeKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }
}
