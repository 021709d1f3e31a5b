import Crypto

/// One schema migration, `NNNN_name.sql`, applied once in its own transaction.
package struct Migration: Sendable, Equatable {
    /// The `NNNN` of the file name; migrations apply in increasing version order.
    package var version: Int
    /// The `name` part of the file name.
    package var name: String
    /// The SQL, byte for byte as in the file.
    package var sql: String

    package init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// `NNNN_name`, as the file is named.
    package var identifier: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }

    /// Whether the migration rebuilds a table others reference: it says so on a line of its own,
    /// `-- lifeline: foreign keys off`, and runs with foreign keys off (SQLite's table rebuild:
    /// dropping the old table would otherwise delete every row referencing it).
    package var turnsForeignKeysOff: Bool { sql.contains("\n-- lifeline: foreign keys off\n") }

    /// Lowercase hex SHA-256 of ``sql``'s UTF-8 bytes, recorded when applied.
    package var checksum: String { Hex.encode(Array(SHA256.hash(data: Array(sql.utf8)))) }
}

/// A migration recorded in `schema_migrations`.
package struct AppliedMigration: Sendable, Equatable {
    package var version: Int
    package var name: String
    /// Hex SHA-256 of the SQL when it was applied.
    package var checksum: String
    /// Epoch seconds.
    package var appliedAt: Int64

    package init(version: Int, name: String, checksum: String, appliedAt: Int64) {
        self.version = version
        self.name = name
        self.checksum = checksum
        self.appliedAt = appliedAt
    }
}

/// Lowercase hexadecimal encoding.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
