/// 64-bit FNV-1a, the stable (non-cryptographic) hash behind crash fingerprints.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Mixes `bytes` into the hash.
    mutating func combine<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01B3
        }
    }

    /// The hash as 16 lowercase hex characters.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        var v = value
        for k in stride(from: 15, through: 0, by: -1) {
            out[k] = digits[Int(v & 0xF)]
            v >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }
}
