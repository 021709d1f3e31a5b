/// The architecture slices of a Mach-O file (a dSYM's DWARF file, or a binary with debug info):
/// thin 64-bit files and fat (universal) files, 32- or 64-bit fat headers. Every read is bounds
/// checked: a damaged or hostile file gives an error, never a trap.
package struct MachOSlice: Sendable, Equatable {
    /// `LC_UUID`, uppercase with dashes (`4C4C44B7-5555-3144-A148-DC4D7A829CC0`), as MetricKit writes it.
    package var uuid: String
    /// `arm64`, `arm64e`, `x86_64`, or `cpu-<type>-<subtype>`.
    package var arch: String
    /// The `__TEXT` segment's vmaddr.
    package var textVMAddress: UInt64
    /// Where the slice starts in the file and its size (the whole file for a thin one).
    package var offset: Int
    package var size: Int
}

package enum MachOSlices {
    static let thinMagic: UInt32 = 0xFEED_FACF  // MH_MAGIC_64, little-endian on disk
    static let fatMagic: UInt32 = 0xCAFE_BABE  // big-endian on disk
    static let fatMagic64: UInt32 = 0xCAFE_BABF
    static let uuidCommand: UInt32 = 0x1B
    static let segment64Command: UInt32 = 0x19

    /// The slices of `bytes` (a whole file); throws ``StoreError/Code/invalid`` naming the problem.
    package static func read(_ bytes: UnsafeRawBufferPointer) throws(StoreError) -> [MachOSlice] {
        guard let magic = bigEndian32(bytes, 0) else { throw invalid("the file is shorter than a Mach-O header") }
        if magic == fatMagic || magic == fatMagic64 {
            let wide = magic == fatMagic64
            guard let count = bigEndian32(bytes, 4), count >= 1, count <= 64 else {
                throw invalid("a fat header with no or too many architectures")
            }
            var slices: [MachOSlice] = []
            for index in 0..<Int(count) {
                let entry = 8 + index * (wide ? 32 : 20)
                let offset: UInt64?
                let size: UInt64?
                if wide {
                    offset = bigEndian64(bytes, entry + 8)
                    size = bigEndian64(bytes, entry + 16)
                } else {
                    offset = bigEndian32(bytes, entry + 8).map(UInt64.init)
                    size = bigEndian32(bytes, entry + 12).map(UInt64.init)
                }
                guard let offset, let size, offset <= UInt64(bytes.count), size <= UInt64(bytes.count) - offset else {
                    throw invalid("fat architecture \(index) lies outside the file")
                }
                slices.append(try thin(bytes, at: Int(offset), size: Int(size)))
            }
            return slices
        }
        return [try thin(bytes, at: 0, size: bytes.count)]
    }

    /// One thin 64-bit Mach-O at `start`.
    static func thin(_ bytes: UnsafeRawBufferPointer, at start: Int, size: Int) throws(StoreError) -> MachOSlice {
        guard littleEndian32(bytes, start) == thinMagic else {
            throw invalid("not a 64-bit Mach-O file (dSYM DWARF file, or a binary with debug info)")
        }
        guard let cpuType = littleEndian32(bytes, start + 4), let cpuSubtype = littleEndian32(bytes, start + 8),
            let commandCount = littleEndian32(bytes, start + 16), commandCount <= 10_000
        else { throw invalid("a damaged Mach-O header") }
        var uuid: String?
        var text: UInt64?
        var cursor = start + 32
        let end = start + size
        for _ in 0..<commandCount {
            guard let command = littleEndian32(bytes, cursor), let length = littleEndian32(bytes, cursor + 4),
                length >= 8, cursor + Int(length) <= end
            else { throw invalid("a load command lies outside the file") }
            if command == uuidCommand, length >= 24 {
                uuid = formatUUID(bytes, cursor + 8)
            } else if command == segment64Command, length >= 72, segmentName(bytes, cursor + 8) == "__TEXT" {
                text = littleEndian64(bytes, cursor + 24)
            }
            cursor += Int(length)
        }
        guard let uuid else { throw invalid("no LC_UUID load command: the file cannot be matched to crashes") }
        return MachOSlice(
            uuid: uuid, arch: archName(cpuType, cpuSubtype), textVMAddress: text ?? 0, offset: start, size: size)
    }

    static func archName(_ type: UInt32, _ subtype: UInt32) -> String {
        switch (type, subtype & 0x00FF_FFFF) {
        case (0x0100_000C, 2): "arm64e"
        case (0x0100_000C, _): "arm64"
        case (0x0100_0007, _): "x86_64"
        case (0x0200_000C, _): "arm64_32"
        default: "cpu-\(type)-\(subtype & 0x00FF_FFFF)"
        }
    }

    private static func formatUUID(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> String? {
        guard at >= 0, at + 16 <= bytes.count else { return nil }
        let digits = Array("0123456789ABCDEF")
        var text = ""
        for index in 0..<16 {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            let byte = bytes[at + index]
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    private static func segmentName(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> String? {
        guard at >= 0, at + 16 <= bytes.count else { return nil }
        let raw = (0..<16).map { bytes[at + $0] }.prefix { $0 != 0 }
        return String(decoding: raw, as: UTF8.self)
    }

    private static func littleEndian32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    private static func littleEndian64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64? {
        guard at >= 0, at + 8 <= bytes.count else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[at + $1]) }
    }

    private static func bigEndian64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64? {
        guard at >= 0, at + 8 <= bytes.count else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) }
    }

    private static func invalid(_ message: String) -> StoreError { StoreError(.invalid, message) }
}
