import LifelineModel
import LifelineStorage

extension Database {
    /// The columns ``key(from:)`` reads, in order.
    private static let keyColumns =
        "id, role, app, created_at, revoked_at, expires_at, last_used_at, previous_valid_until"

    /// Creates a key and returns it with its token, `ll_<id>_<secret>` (shown once; only a hash is kept).
    ///
    /// Ingest keys require an app; admin keys must not have one; read keys may. `expiresAt`
    /// (epoch seconds) ends the key's validity.
    package func createKey(
        role: Role, app: String?, expiresAt: Int64? = nil, now: Int64 = WallClock.nowSeconds()
    ) throws(StoreError) -> (key: APIKey, token: String) {
        let app = try APIKey.validatedApp(role: role, app: app, expiresAt: expiresAt, now: now)
        let secret = KeyToken.makeSecret()
        let hash = KeyToken.hash(secret)
        for _ in 0..<5 {
            let key = APIKey(id: KeyToken.makeID(), role: role, app: app, createdAt: now, expiresAt: expiresAt)
            let inserted = try withConnection { (connection) throws(StoreError) -> Bool in
                let changed = try connection.run(
                    """
                    INSERT INTO api_keys (id, role, app, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO NOTHING
                    """,
                    [.text(key.id), .text(role.rawValue), .text(app), .blob(hash), .integer(now), .integer(expiresAt)])
                return changed == 1
            }
            if inserted { return (key, KeyToken.prefix + key.id + "_" + secret) }
        }
        throw StoreError(.internal, "could not allocate a key id")
    }

    /// Gives key `id` a new secret and returns its new token. The previous secret keeps working
    /// until `now + grace` seconds, so clients can be moved over without an outage; a second
    /// rotation within the grace period ends the first one's grace.
    package func rotateKey(
        id: String, grace: Int64, now: Int64 = WallClock.nowSeconds()
    ) throws(StoreError) -> (key: APIKey, token: String) {
        guard grace >= 0 else { throw StoreError(.invalid, "the grace period cannot be negative") }
        let secret = KeyToken.makeSecret()
        let key = try withConnection { (connection) throws(StoreError) -> APIKey? in
            let changed = try connection.run(
                """
                UPDATE api_keys SET previous_secret_hash = secret_hash, previous_valid_until = ?, secret_hash = ?
                WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
                """,
                [.integer(now + grace), .blob(KeyToken.hash(secret)), .text(id), .integer(now)])
            guard changed == 1 else { return nil }
            return try connection.first("SELECT \(Self.keyColumns) FROM api_keys WHERE id = ?", [.text(id)]) {
                (row) throws(StoreError) -> APIKey in try Self.key(from: row)
            }
        }
        guard let key else { throw StoreError(.notFound, "no active key \(id)") }
        return (key, KeyToken.prefix + id + "_" + secret)
    }

    /// Every key, oldest first.
    package func listKeys() throws(StoreError) -> [APIKey] {
        try withConnection { (connection) throws(StoreError) -> [APIKey] in
            try connection.query("SELECT \(Self.keyColumns) FROM api_keys ORDER BY created_at, id") {
                (row) throws(StoreError) -> APIKey in try Self.key(from: row)
            }
        }
    }

    /// Revokes key `id` and ends its dashboard sessions; `true` if this call revoked it, `false`
    /// if unknown or already revoked.
    package func revokeKey(id: String, now: Int64 = WallClock.nowSeconds()) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) -> Bool in
            let revoked =
                try connection.run(
                    "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    [.integer(now), .text(id)])
                == 1
            try connection.run("DELETE FROM dashboard_sessions WHERE key_id = ?", [.text(id)])
            return revoked
        }
    }

    /// The active key a token belongs to, or `nil` (malformed token, unknown id, wrong secret,
    /// revoked, expired). The secret's hash is compared in constant time, against the current
    /// secret and, during a rotation's grace period, the previous one.
    package func verify(token: String, now: Int64 = WallClock.nowSeconds()) throws(StoreError) -> APIKey? {
        guard let (id, secret) = KeyToken.parse(token) else { return nil }
        let presented = KeyToken.hash(secret)
        let row = try withConnection { (connection) throws(StoreError) -> (APIKey, [UInt8], [UInt8]?)? in
            try connection.first(
                "SELECT \(Self.keyColumns), secret_hash, previous_secret_hash FROM api_keys WHERE id = ?", [.text(id)]
            ) { (row) throws(StoreError) -> (APIKey, [UInt8], [UInt8]?) in
                (try Self.key(from: row), row.blob(8), row.isNull(9) ? nil : row.blob(9))
            }
        }
        // Compare even for unknown ids so timing does not tell which ids exist.
        let stored = row?.1 ?? [UInt8](repeating: 0, count: 32)
        let previous = row?.2 ?? [UInt8](repeating: 0, count: 32)
        let matchesCurrent = KeyToken.constantTimeEquals(stored, presented)
        let matchesPrevious = KeyToken.constantTimeEquals(previous, presented)
        guard let key = row?.0, !key.isRevoked, !key.isExpired(at: now) else { return nil }
        if matchesCurrent { return key }
        if matchesPrevious, row?.2 != nil, let until = key.previousValidUntil, now < until { return key }
        return nil
    }

    /// Records when keys were last used (one statement for a batch of keys).
    package func recordKeyUse(_ uses: [String: Int64]) throws(StoreError) {
        guard !uses.isEmpty else { return }
        try withConnection { (connection) throws(StoreError) in
            for (id, at) in uses {
                try connection.run(
                    "UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?",
                    [.integer(at), .text(id)])
            }
        }
    }

    // MARK: Dashboard sessions

    /// Opens a dashboard session for `keyID` lasting `ttl` seconds; returns its opaque id (the
    /// cookie value; only its SHA-256 is stored). Expired sessions are removed on the way.
    package func createSession(
        keyID: String, ttl: Int64, now: Int64 = WallClock.nowSeconds()
    ) throws(StoreError) -> String {
        let id = "lls_" + KeyToken.makeSecret()
        try withConnection { (connection) throws(StoreError) in
            try connection.run("DELETE FROM dashboard_sessions WHERE expires_at <= ?", [.integer(now)])
            try connection.run(
                "INSERT INTO dashboard_sessions (id_hash, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                [.blob(KeyToken.hash(id)), .text(keyID), .integer(now), .integer(now + ttl)])
        }
        return id
    }

    /// The key a live session signs in as, or `nil` (unknown, expired, key revoked or expired).
    package func sessionKey(_ sessionID: String, now: Int64 = WallClock.nowSeconds()) throws(StoreError) -> APIKey? {
        guard sessionID.hasPrefix("lls_"), sessionID.utf8.count <= 64 else { return nil }
        return try withConnection { (connection) throws(StoreError) -> APIKey? in
            try connection.first(
                """
                SELECT k.id, k.role, k.app, k.created_at, k.revoked_at, k.expires_at, k.last_used_at,
                    k.previous_valid_until
                FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
                WHERE s.id_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL
                    AND (k.expires_at IS NULL OR k.expires_at > ?)
                """,
                [.blob(KeyToken.hash(sessionID)), .integer(now), .integer(now)]
            ) { (row) throws(StoreError) -> APIKey in try Self.key(from: row) }
        }
    }

    /// Ends a session (logout); unknown ids are ignored.
    package func deleteSession(_ sessionID: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.run(
                "DELETE FROM dashboard_sessions WHERE id_hash = ?", [.blob(KeyToken.hash(sessionID))])
        }
    }

    private static func key(from row: Statement) throws(StoreError) -> APIKey {
        guard let role = Role(rawValue: row.text(1)) else {
            throw StoreError(.internal, "internal storage error", cause: "unknown role in api_keys")
        }
        return APIKey(
            id: row.text(0), role: role, app: row.optionalText(2), createdAt: row.int64(3),
            revokedAt: row.optionalInt64(4), expiresAt: row.optionalInt64(5), lastUsedAt: row.optionalInt64(6),
            previousValidUntil: row.optionalInt64(7))
    }
}
