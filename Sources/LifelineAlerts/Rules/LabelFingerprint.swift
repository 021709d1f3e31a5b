/// The stable identity of a label set: 64-bit FNV-1a over the sorted `name=value` pairs, as 16
/// hex digits. Equal label sets always give the same fingerprint, across restarts.
package enum LabelFingerprint {
    /// The fingerprint of `labels`.
    package static func of(_ labels: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        for (name, value) in labels.sorted(by: { $0.key < $1.key }) {
            mix(name.utf8)
            mix([0x3D])
            mix(value.utf8)
            mix([0x00])
        }
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        for k in 0..<16 { out[15 - k] = digits[Int((hash >> (UInt64(k) * 4)) & 0xF)] }
        return String(decoding: out, as: UTF8.self)
    }
}
