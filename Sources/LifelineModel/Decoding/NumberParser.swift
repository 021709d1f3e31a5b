#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Number conversion straight from bytes (already validated by the tape for JSON numbers).
enum NumberParser {
    /// Exact powers of ten representable as `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// Optional `-` then decimal digits only; `nil` on overflow or any other byte.
    static func int64(_ raw: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        var negative = false
        if raw.count > 0 && raw[0] == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        guard i < raw.count else { return nil }
        var magnitude: UInt64 = 0
        while i < raw.count {
            let d = raw[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            magnitude = s
            i += 1
        }
        if negative {
            if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Decimal digits only, full 64-bit range; `nil` on overflow, sign or any other byte.
    static func uint64(_ raw: UnsafeRawBufferPointer) -> UInt64? {
        guard raw.count > 0 else { return nil }
        var value: UInt64 = 0
        for c in raw {
            let d = c &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            value = s
        }
        return value
    }

    /// A JSON number (`-`? digits (`.` digits)? ([eE] [+-]? digits)?) as `Double`.
    ///
    /// Exact fast path (Clinger): up to 15 significant digits scaled by an exact power of ten;
    /// everything else goes through `strtod`, so results are always correctly rounded.
    static func double(_ raw: UnsafeRawBufferPointer) -> Double? {
        let n = raw.count
        guard n > 0 else { return nil }
        var i = 0
        var negative = false
        if raw[0] == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        var sawDigit = false
        while i < n, case let d = raw[i] &- UInt8(ascii: "0"), d < 10 {
            sawDigit = true
            if digits > 0 || d != 0 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
            }
            i += 1
        }
        if i < n && raw[i] == UInt8(ascii: ".") {
            i += 1
            while i < n, case let d = raw[i] &- UInt8(ascii: "0"), d < 10 {
                sawDigit = true
                if digits > 0 || d != 0 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    digits += 1
                }
                exponent -= 1
                i += 1
            }
        }
        guard sawDigit else { return nil }
        if i < n && (raw[i] == UInt8(ascii: "e") || raw[i] == UInt8(ascii: "E")) {
            i += 1
            var expNegative = false
            if i < n && (raw[i] == UInt8(ascii: "+") || raw[i] == UInt8(ascii: "-")) {
                expNegative = raw[i] == UInt8(ascii: "-")
                i += 1
            }
            var e = 0
            var sawExpDigit = false
            while i < n, case let d = raw[i] &- UInt8(ascii: "0"), d < 10 {
                sawExpDigit = true
                if e < 100_000 { e = e * 10 + Int(d) }
                i += 1
            }
            guard sawExpDigit else { return nil }
            exponent += expNegative ? -e : e
        }
        guard i == n else { return nil }
        if digits <= 15 && exponent >= -22 && exponent <= 22 {
            var value = Double(mantissa)
            if exponent < 0 {
                value /= powersOfTen[-exponent]
            } else {
                value *= powersOfTen[exponent]
            }
            return negative ? -value : value
        }
        if mantissa == 0 && digits == 0 { return negative ? -0.0 : 0 }
        return slowDouble(raw)
    }

    /// Longest number text handed to `strtod`: enough for any double written exactly (767
    /// significant digits plus sign, point and exponent); longer ones are not numbers Lifeline
    /// reads (strtod's work grows with the digits).
    static let maxSlowDigits = 1_100

    private static func slowDouble(_ raw: UnsafeRawBufferPointer) -> Double? {
        guard raw.count <= maxSlowDigits else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: raw.count + 1) { buffer -> Double? in
            guard let start = buffer.baseAddress else { return nil }
            for k in 0..<raw.count { buffer[k] = CChar(bitPattern: raw[k]) }
            buffer[raw.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(start, &end)
            guard let end, end - start == raw.count else { return nil }
            return value
        }
    }
}
