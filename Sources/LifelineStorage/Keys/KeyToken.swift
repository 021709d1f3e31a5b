import Crypto

/// Generation, parsing and hashing of API key tokens, `ll_<id>_<secret>`.
///
/// `<id>` is 10 characters of lowercase Crockford base32 (50 random bits); `<secret>` is 32 random
/// bytes in unpadded base64url (43 characters, may contain `_` and `-`). Only SHA-256 of the
/// secret's text is stored.
package enum KeyToken {
    package static let prefix = "ll_"
    static let idLength = 10
    static let idAlphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    static let secretBytes = 32

    /// A new random key id.
    package static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bits = generator.next() as UInt64
        var chars: [UInt8] = []
        for _ in 0..<idLength {
            chars.append(idAlphabet[Int(bits & 31)])
            bits >>= 5
        }
        return String(decoding: chars, as: UTF8.self)
    }

    /// A new random secret, base64url without padding.
    package static func makeSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(secretBytes)
        while bytes.count < secretBytes {
            var word = generator.next() as UInt64
            for _ in 0..<8 where bytes.count < secretBytes {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return base64URL(bytes)
    }

    /// Splits a token into id and secret; `nil` when it is not shaped like a Lifeline token.
    package static func parse(_ token: String) -> (id: String, secret: String)? {
        guard token.utf8.count <= 128, token.hasPrefix(prefix) else { return nil }
        let rest = token.dropFirst(prefix.count)
        guard let separator = rest.firstIndex(of: "_") else { return nil }
        let id = rest[..<separator]
        let secret = rest[rest.index(after: separator)...]
        guard (8...12).contains(id.utf8.count), id.utf8.allSatisfy({ idAlphabet.contains($0) }),
            !secret.isEmpty
        else { return nil }
        return (String(id), String(secret))
    }

    /// SHA-256 of the secret's UTF-8 bytes.
    package static func hash(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(secret.utf8)))
    }

    /// Compares two byte strings in time independent of where they differ.
    package static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for byte in chunk { value = value << 8 | UInt32(byte) }
            value <<= UInt32(8 * (3 - chunk.count))
            let characters = chunk.count + 1
            for position in 0..<characters {
                out.append(alphabet[Int((value >> UInt32(18 - 6 * position)) & 63)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
