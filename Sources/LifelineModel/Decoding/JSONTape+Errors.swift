/// How the tape parser names a byte and a place in its errors ("line L column C").
extension JSONTape {
    static func printable(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : String(format0x: c)
    }

    static func describe(byte c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? "character '\(String(UnicodeScalar(c)))'" : "byte \(String(format0x: c))"
    }

    /// "line L column C" of a byte offset (1-based; the column counts UTF-8 characters).
    static func position(_ offset: Int, in bytes: UnsafeRawBufferPointer) -> String {
        var line = 1
        var column = 1
        let end = min(offset, bytes.count)
        var k = 0
        while k < end {
            let c = bytes[k]
            if c == 0x0A {
                line += 1
                column = 1
            } else if c & 0xC0 != 0x80 {
                column += 1
            }
            k += 1
        }
        return "line \(line) column \(column)"
    }

    static func error(_ what: String, at offset: Int, in bytes: UnsafeRawBufferPointer) -> DecodeError {
        DecodeError(code: .malformedJSON, message: "\(what) at \(position(offset, in: bytes))", offset: offset)
    }
}

extension String {
    /// `0x1f`-style rendering of a byte.
    fileprivate init(format0x c: UInt8) {
        let digits: [Character] = Array("0123456789abcdef")
        self = "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 0xF)])
    }
}
