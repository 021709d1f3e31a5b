#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A flat, simdjson-like "tape" of one JSON text.
///
/// The parser is iterative (an explicit stack of open containers, never recursion driven by the
/// input). Every value becomes one ``Token``; a container token records the index just past its
/// last descendant (`next`), so a sibling is reached in O(1). Object members are laid out as a key
/// string token followed by the value's tokens. Strings are not materialized: a token keeps the
/// byte range between the quotes and whether it holds escapes; numbers keep their byte range.
///
/// The tape borrows `bytes`: it is only valid while the buffer it was parsed from is alive.
struct JSONTape {
    /// The kind of a token.
    enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    /// One JSON value (or object key).
    struct Token {
        /// Strings: offset just past the opening quote. Others: offset of the first byte.
        var start: UInt32
        /// Strings: offset of the closing quote. Others: offset just past the last byte.
        var end: UInt32
        /// Containers: index of the first token after this container. Others: own index + 1.
        var next: UInt32
        /// Containers: number of elements (arrays) or members (objects).
        var count: UInt32
        var kind: Kind
        /// Strings: ``escapedFlag`` when the string holds backslash escapes.
        /// Numbers: ``integerFlag`` when there is no fraction or exponent.
        var flags: UInt8
    }

    static let escapedFlag: UInt8 = 1
    static let integerFlag: UInt8 = 2

    /// Growable token memory, managed by hand: appending and reading tokens are on the hot path,
    /// and an `Array` would add a uniqueness check per append and a bounds check per read.
    final class Storage {
        private(set) var base: UnsafeMutablePointer<Token>
        private(set) var capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = max(16, capacity)
            self.base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        @inline(__always) func append(_ token: Token) {
            if count == capacity { grow() }
            (base + count).initialize(to: token)
            count += 1
        }

        private func grow() {
            let newCapacity = capacity * 2
            let newBase = UnsafeMutablePointer<Token>.allocate(capacity: newCapacity)
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
            base = newBase
            capacity = newCapacity
        }
    }

    let bytes: UnsafeRawBufferPointer
    private let storage: Storage

    /// The tokens, in document order. Valid as long as this tape.
    var tokens: UnsafeBufferPointer<Token> { UnsafeBufferPointer(start: storage.base, count: storage.count) }

    /// Parses `bytes` completely; refuses anything that is not exactly one JSON value.
    init(parsing bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DecodeError) {
        self.bytes = bytes
        guard bytes.count < Int(UInt32.max) else {
            throw DecodeError(code: .limitExceeded, message: "body larger than 4 GiB", offset: nil)
        }
        self.storage = Storage(capacity: bytes.count / 12)
        try parse(limits: limits)
    }

    // MARK: - Parsing

    private enum State {
        case value, afterValue, key
    }

    private func parse(limits: DecodeLimits) throws(DecodeError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else {
            throw Self.error("empty body, expected a JSON value", at: 0, in: bytes)
        }
        let n = bytes.count
        var i = 0
        // UTF-8 byte order mark.
        if n >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { i = 3 }
        var stack: [UInt32] = []
        stack.reserveCapacity(64)
        let maxDepth = max(1, limits.maxDepth)
        let maxString = limits.maxStringBytes
        var state = State.value

        @inline(__always) func skipWhitespace(_ i: inout Int) {
            while i < n {
                let c = base[i]
                if c > 0x20 { return }
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
                // Indentation: runs of spaces, eight at a time.
                while i + 8 <= n && UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) == Self.eightSpaces {
                    i += 8
                }
            }
        }

        while true {
            switch state {
            case .value:
                skipWhitespace(&i)
                guard i < n else {
                    throw Self.error("unexpected end of input, expected a value", at: i, in: bytes)
                }
                if let top = stack.last, storage.base[Int(top)].kind == .array { storage.base[Int(top)].count &+= 1 }
                let c = base[i]
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard stack.count < maxDepth else {
                        throw DecodeError(
                            code: .limitExceeded,
                            message: "nesting deeper than \(maxDepth) levels at \(Self.position(i, in: bytes))",
                            offset: i)
                    }
                    let isObject = c == UInt8(ascii: "{")
                    stack.append(UInt32(storage.count))
                    storage.append(
                        Token(
                            start: UInt32(i), end: 0, next: 0, count: 0, kind: isObject ? .object : .array, flags: 0))
                    i += 1
                    skipWhitespace(&i)
                    if i < n && base[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        closeContainer(&stack, end: i)
                        state = .afterValue
                    } else {
                        state = isObject ? .key : .value
                    }
                case UInt8(ascii: "\""):
                    try scanString(base: base, count: n, at: &i, maxBytes: maxString)
                    state = .afterValue
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    try scanNumber(base: base, count: n, at: &i)
                    state = .afterValue
                case UInt8(ascii: "t"):
                    try scanLiteral(base: base, count: n, at: &i, literal: "true", kind: .true)
                    state = .afterValue
                case UInt8(ascii: "f"):
                    try scanLiteral(base: base, count: n, at: &i, literal: "false", kind: .false)
                    state = .afterValue
                case UInt8(ascii: "n"):
                    try scanLiteral(base: base, count: n, at: &i, literal: "null", kind: .null)
                    state = .afterValue
                default:
                    throw Self.error("unexpected \(Self.describe(byte: c)), expected a value", at: i, in: bytes)
                }
            case .afterValue:
                skipWhitespace(&i)
                guard let top = stack.last else {
                    guard i == n else {
                        throw Self.error(
                            "unexpected \(Self.describe(byte: base[i])) after the end of the JSON value", at: i,
                            in: bytes)
                    }
                    return
                }
                let isObject = storage.base[Int(top)].kind == .object
                guard i < n else {
                    throw Self.error(
                        "unexpected end of input, unclosed \(isObject ? "object" : "array")", at: i, in: bytes)
                }
                let c = base[i]
                if c == UInt8(ascii: ",") {
                    i += 1
                    state = isObject ? .key : .value
                } else if c == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    i += 1
                    closeContainer(&stack, end: i)
                } else {
                    throw Self.error(
                        "unexpected \(Self.describe(byte: c)), expected ',' or '\(isObject ? "}" : "]")'", at: i,
                        in: bytes)
                }
            case .key:
                skipWhitespace(&i)
                guard i < n else {
                    throw Self.error("unexpected end of input, expected an object key", at: i, in: bytes)
                }
                guard base[i] == UInt8(ascii: "\"") else {
                    throw Self.error(
                        "unexpected \(Self.describe(byte: base[i])), expected a string key", at: i, in: bytes)
                }
                storage.base[Int(stack[stack.count - 1])].count &+= 1
                try scanString(base: base, count: n, at: &i, maxBytes: maxString)
                skipWhitespace(&i)
                guard i < n, base[i] == UInt8(ascii: ":") else {
                    let what = i < n ? Self.describe(byte: base[i]) : "end of input"
                    throw Self.error("unexpected \(what), expected ':' after object key", at: i, in: bytes)
                }
                i += 1
                state = .value
            }
        }
    }

    @inline(__always)
    private func closeContainer(_ stack: inout [UInt32], end: Int) {
        let index = Int(stack.removeLast())
        storage.base[index].end = UInt32(end)
        storage.base[index].next = UInt32(storage.count)
    }

    /// Scans a string starting at the opening quote; validates escapes; leaves `i` past the closing quote.
    @inline(__always)
    private func scanString(
        base: UnsafePointer<UInt8>, count n: Int, at i: inout Int, maxBytes: Int
    ) throws(DecodeError) {
        let open = i
        var j = i + 1
        var flags: UInt8 = 0
        while true {
            // Fast path: eight bytes at a time while none is '"', '\\' or a control character.
            while j + 8 <= n {
                let word = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
                if Self.hasSpecialStringByte(word) { break }
                j += 8
            }
            while j < n {
                let c = base[j]
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { break }
                j += 1
            }
            guard j < n else {
                throw Self.error("unterminated string", at: open, in: bytes)
            }
            let c = base[j]
            if c == UInt8(ascii: "\"") { break }
            if c < 0x20 {
                throw Self.error("unescaped control character in string", at: j, in: bytes)
            }
            // Backslash escape.
            flags = Self.escapedFlag
            guard j + 1 < n else { throw Self.error("unterminated string", at: open, in: bytes) }
            switch base[j + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                j += 2
            case UInt8(ascii: "u"):
                guard j + 5 < n, Self.hexValue(base[j + 2]) != nil, Self.hexValue(base[j + 3]) != nil,
                    Self.hexValue(base[j + 4]) != nil, Self.hexValue(base[j + 5]) != nil
                else {
                    throw Self.error("invalid \\u escape in string, expected 4 hex digits", at: j, in: bytes)
                }
                j += 6
            default:
                throw Self.error("invalid escape '\\\(Self.printable(base[j + 1]))' in string", at: j, in: bytes)
            }
        }
        let length = j - open - 1
        if length > maxBytes {
            throw DecodeError(
                code: .limitExceeded,
                message:
                    "string of \(length) bytes longer than the limit of \(maxBytes) at \(Self.position(open, in: bytes))",
                offset: open)
        }
        storage.append(
            Token(
                start: UInt32(open + 1), end: UInt32(j), next: UInt32(storage.count + 1), count: 0, kind: .string,
                flags: flags))
        i = j + 1
    }

    /// Scans a number per the JSON grammar; leaves `i` past it.
    @inline(__always)
    private func scanNumber(base: UnsafePointer<UInt8>, count n: Int, at i: inout Int) throws(DecodeError) {
        let start = i
        var j = i
        var integer = true
        if base[j] == UInt8(ascii: "-") { j += 1 }
        guard j < n, Self.isDigit(base[j]) else {
            throw Self.error("invalid number, expected a digit", at: j, in: bytes)
        }
        if base[j] == UInt8(ascii: "0") {
            j += 1
            if j < n && Self.isDigit(base[j]) {
                throw Self.error("invalid number, leading zero", at: start, in: bytes)
            }
        } else {
            while j < n && Self.isDigit(base[j]) { j += 1 }
        }
        if j < n && base[j] == UInt8(ascii: ".") {
            integer = false
            j += 1
            guard j < n, Self.isDigit(base[j]) else {
                throw Self.error("invalid number, expected a digit after '.'", at: j, in: bytes)
            }
            while j < n && Self.isDigit(base[j]) { j += 1 }
        }
        if j < n && (base[j] == UInt8(ascii: "e") || base[j] == UInt8(ascii: "E")) {
            integer = false
            j += 1
            if j < n && (base[j] == UInt8(ascii: "+") || base[j] == UInt8(ascii: "-")) { j += 1 }
            guard j < n, Self.isDigit(base[j]) else {
                throw Self.error("invalid number, expected a digit in the exponent", at: j, in: bytes)
            }
            while j < n && Self.isDigit(base[j]) { j += 1 }
        }
        storage.append(
            Token(
                start: UInt32(start), end: UInt32(j), next: UInt32(storage.count + 1), count: 0, kind: .number,
                flags: integer ? Self.integerFlag : 0))
        i = j
    }

    @inline(__always)
    private func scanLiteral(
        base: UnsafePointer<UInt8>, count n: Int, at i: inout Int, literal: StaticString, kind: Kind
    ) throws(DecodeError) {
        let length = literal.utf8CodeUnitCount
        guard i + length <= n, memcmp(base + i, literal.utf8Start, length) == 0 else {
            throw Self.error("invalid literal, expected '\(literal)'", at: i, in: bytes)
        }
        storage.append(
            Token(
                start: UInt32(i), end: UInt32(i + length), next: UInt32(storage.count + 1), count: 0, kind: kind,
                flags: 0))
        i += length
    }

    // MARK: - Helpers

    private static let eightSpaces: UInt64 = 0x2020_2020_2020_2020

    /// Whether any byte of `word` is `"`, `\\` or below 0x20 (SWAR; no false negatives).
    @inline(__always)
    private static func hasSpecialStringByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ 0x2222_2222_2222_2222
        let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        let control = (word &- ones &* 0x20) & ~word
        return (zeroQuote | zeroBackslash | control) & highs != 0
    }

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    @inline(__always) static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
