#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading values back from the tape. Token indices are `Int`s into ``JSONTape/tokens``.
extension JSONTape {
    @inline(__always) func kind(_ t: Int) -> Kind { tokens[t].kind }

    /// The index of the token after `t` and all its descendants.
    @inline(__always) func next(_ t: Int) -> Int { Int(tokens[t].next) }

    /// Byte range of the value `t` in the body (strings include their quotes).
    func byteRange(_ t: Int) -> Range<Int> {
        let token = tokens[t]
        if token.kind == .string { return Int(token.start) - 1..<Int(token.end) + 1 }
        return Int(token.start)..<Int(token.end)
    }

    /// A human-readable name of the kind of `t`, for messages.
    func kindName(_ t: Int) -> String {
        switch tokens[t].kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .true, .false: return "a boolean"
        case .null: return "null"
        }
    }

    // MARK: Iteration

    /// Calls `body(key, value)` for each member of the object `t` (no-op when `t` is not an object).
    @inline(__always)
    func forEachMember<E: Error>(_ t: Int, _ body: (_ key: Int, _ value: Int) throws(E) -> Void) throws(E) {
        guard tokens[t].kind == .object else { return }
        let end = Int(tokens[t].next)
        var k = t + 1
        while k < end {
            let v = k + 1
            try body(k, v)
            k = Int(tokens[v].next)
        }
    }

    /// Calls `body(element)` for each element of the array `t` (no-op when `t` is not an array).
    @inline(__always)
    func forEachElement<E: Error>(_ t: Int, _ body: (_ element: Int) throws(E) -> Void) throws(E) {
        guard tokens[t].kind == .array else { return }
        let end = Int(tokens[t].next)
        var e = t + 1
        while e < end {
            try body(e)
            e = Int(tokens[e].next)
        }
    }

    /// The value of member `key` of object `t`, if any (linear scan; for rarely read keys).
    func member(_ t: Int, _ key: StaticString) -> Int? {
        var found: Int?
        forEachMember(t) { k, v in
            if found == nil && keyEquals(k, key) { found = v }
        }
        return found
    }

    // MARK: Strings

    /// Whether the string token `t` equals `literal` (compared as raw bytes, escapes decoded).
    @inline(__always)
    func keyEquals(_ t: Int, _ literal: StaticString) -> Bool {
        let token = tokens[t]
        let length = Int(token.end &- token.start)
        if token.flags & JSONTape.escapedFlag != 0 {
            // An escape turns 2 to 12 raw bytes into 1 to 4: outside these lengths it cannot match,
            // and a long escaped key is not copied once per comparison.
            guard length >= literal.utf8CodeUnitCount, length <= 12 * literal.utf8CodeUnitCount else { return false }
            return unescapedBytes(t)
                == Array(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
        guard length == literal.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base + Int(token.start), literal.utf8Start, length) == 0
    }

    /// The raw bytes of string token `t` (escapes not decoded).
    @inline(__always)
    func rawStringBytes(_ t: Int) -> UnsafeRawBufferPointer {
        let token = tokens[t]
        return UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)])
    }

    /// The length of string token `t` in raw bytes (escapes not decoded).
    @inline(__always) func rawLength(_ t: Int) -> Int { Int(tokens[t].end &- tokens[t].start) }

    /// Whether the string token `t` holds escapes.
    @inline(__always) func isEscaped(_ t: Int) -> Bool { tokens[t].flags & JSONTape.escapedFlag != 0 }

    /// The string value of token `t`; `nil` when `t` is not a string.
    func string(_ t: Int) -> String? {
        guard tokens[t].kind == .string else { return nil }
        if !isEscaped(t) { return String(decoding: rawStringBytes(t), as: UTF8.self) }
        return String(decoding: unescapedBytes(t), as: UTF8.self)
    }

    /// Like ``string(_:)`` but the empty string becomes `nil` ("unknown").
    func nonEmptyString(_ t: Int) -> String? {
        guard tokens[t].kind == .string, tokens[t].end > tokens[t].start else { return nil }
        return string(t)
    }

    /// The bytes of string token `t` with escapes decoded (invalid surrogates become U+FFFD).
    func unescapedBytes(_ t: Int) -> [UInt8] {
        let raw = rawStringBytes(t)
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        let n = raw.count
        while i < n {
            let c = raw[i]
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = Self.hex4(raw, i)
                i += 4
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    // High surrogate: needs a following \uDC00-\uDFFF.
                    if i + 6 <= n && raw[i] == UInt8(ascii: "\\") && raw[i + 1] == UInt8(ascii: "u") {
                        let low = Self.hex4(raw, i + 2)
                        if low >= 0xDC00 && low < 0xE000 {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            i += 6
                        } else {
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    scalar = 0xFFFD
                }
                Self.appendUTF8(scalar, to: &out)
            default: out.append(e)  // \" \\ \/
            }
        }
        return out
    }

    private static func hex4(_ raw: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 4 | (hexValue(raw[i + k]) ?? 0) }
        return v
    }

    private static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers and booleans

    /// The value of a number token as `Int64` (integral doubles accepted); `nil` otherwise.
    func int64(_ t: Int) -> Int64? {
        let token = tokens[t]
        guard token.kind == .number else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)])
        if token.flags & JSONTape.integerFlag != 0, let v = NumberParser.int64(raw) { return v }
        guard let d = NumberParser.double(raw), d.rounded() == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
        return Int64(d)
    }

    /// The value of a non-negative integer token as `UInt64` (full 64-bit range); `nil` otherwise.
    func uint64(_ t: Int) -> UInt64? {
        let token = tokens[t]
        guard token.kind == .number else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)])
        if token.flags & JSONTape.integerFlag != 0 { return NumberParser.uint64(raw) }
        guard let d = NumberParser.double(raw), d.rounded() == d, d >= 0, d < 1.8e19 else { return nil }
        return UInt64(d)
    }

    /// The value of a number token as `Double`; `nil` otherwise.
    func double(_ t: Int) -> Double? {
        let token = tokens[t]
        guard token.kind == .number else { return nil }
        return NumberParser.double(UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)]))
    }

    /// `true`/`false` tokens, or numbers 0/1; `nil` otherwise.
    func bool(_ t: Int) -> Bool? {
        switch tokens[t].kind {
        case .true: return true
        case .false: return false
        case .number: return int64(t).map { $0 != 0 }
        default: return nil
        }
    }
}
