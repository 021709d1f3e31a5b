extension Database {
    /// Creates a key and returns it with its token, `ll_<id>_<secret>` (shown once; only a hash is kept).
    ///
    /// Ingest keys require an app; admin keys must not have one; read keys may.
    package func createKey(role: Role, app: String?, now: Int64 = WallClock.nowSeconds()) throws(StoreError) -> (
        key: APIKey, token: String
    ) {
        let app = app.flatMap { $0.isEmpty ? nil : $0 }
        switch role {
        case .ingest where app == nil:
            throw StoreError(.invalid, "an ingest key needs an app bundle id")
        case .admin where app != nil:
            throw StoreError(.invalid, "an admin key cannot be scoped to an app")
        default:
            break
        }
        if let app, app.utf8.count > 255 {
            throw StoreError(.invalid, "the app bundle id must be at most 255 bytes")
        }
        let secret = KeyToken.makeSecret()
        let hash = KeyToken.hash(secret)
        for _ in 0..<5 {
            let key = APIKey(id: KeyToken.makeID(), role: role, app: app, createdAt: now)
            let inserted = try withConnection { (connection) throws(StoreError) -> Bool in
                let changed = try connection.run(
                    """
                    INSERT INTO api_keys (id, role, app, secret_hash, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO NOTHING
                    """,
                    [.text(key.id), .text(role.rawValue), .text(app), .blob(hash), .integer(now)])
                return changed == 1
            }
            if inserted { return (key, KeyToken.prefix + key.id + "_" + secret) }
        }
        throw StoreError(.internal, "could not allocate a key id")
    }

    /// Every key, oldest first.
    package func listKeys() throws(StoreError) -> [APIKey] {
        try withConnection { (connection) throws(StoreError) -> [APIKey] in
            try connection.query("SELECT id, role, app, created_at, revoked_at FROM api_keys ORDER BY created_at, id") {
                (row) throws(StoreError) -> APIKey in try Self.key(from: row)
            }
        }
    }

    /// Revokes key `id`; `true` if this call revoked it, `false` if unknown or already revoked.
    package func revokeKey(id: String, now: Int64 = WallClock.nowSeconds()) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) -> Bool in
            try connection.run(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.integer(now), .text(id)])
                == 1
        }
    }

    /// The active key a token belongs to, or `nil` (malformed token, unknown id, wrong secret, revoked).
    /// The secret's hash is compared in constant time.
    package func verify(token: String) throws(StoreError) -> APIKey? {
        guard let (id, secret) = KeyToken.parse(token) else { return nil }
        let presented = KeyToken.hash(secret)
        let row = try withConnection { (connection) throws(StoreError) -> (APIKey, [UInt8])? in
            try connection.first(
                "SELECT id, role, app, created_at, revoked_at, secret_hash FROM api_keys WHERE id = ?", [.text(id)]
            ) { (row) throws(StoreError) -> (APIKey, [UInt8]) in (try Self.key(from: row), row.blob(5)) }
        }
        // Compare even for unknown ids so timing does not tell which ids exist.
        let stored = row?.1 ?? [UInt8](repeating: 0, count: 32)
        let matches = KeyToken.constantTimeEquals(stored, presented)
        guard let key = row?.0, matches, !key.isRevoked else { return nil }
        return key
    }

    private static func key(from row: Statement) throws(StoreError) -> APIKey {
        guard let role = Role(rawValue: row.text(1)) else {
            throw StoreError(.internal, "internal storage error", cause: "unknown role in api_keys")
        }
        return APIKey(
            id: row.text(0), role: role, app: row.optionalText(2), createdAt: row.int64(3),
            revokedAt: row.optionalInt64(4))
    }
}
