import LifelineModel
import LifelineStorage
import PostgresNIO

/// API keys on PostgreSQL: the same tokens, roles, rules and constant-time checks as the SQLite
/// store (``KeyToken``, ``APIKey/validatedApp(role:app:expiresAt:now:)``).
extension PostgresStore {
    static let keyColumns =
        "id, role, app, created_at, revoked_at, expires_at, last_used_at, previous_valid_until"

    /// Creates a key; returns it with its token (shown once).
    package func createKey(
        role: Role, app: String?, expiresAt: Int64? = nil, now: Int64 = WallClock.nowSeconds()
    ) async throws -> (key: APIKey, token: String) {
        let app = try APIKey.validatedApp(role: role, app: app, expiresAt: expiresAt, now: now)
        let secret = KeyToken.makeSecret()
        let hash = ByteBuffer(bytes: KeyToken.hash(secret))
        for _ in 0..<5 {
            let key = APIKey(id: KeyToken.makeID(), role: role, app: app, createdAt: now, expiresAt: expiresAt)
            let (id, roleName) = (key.id, role.rawValue)
            let inserted = try await client.query(
                """
                INSERT INTO api_keys (id, role, app, secret_hash, created_at, expires_at)
                VALUES (\(id), \(roleName), \(app), \(hash), \(now), \(expiresAt)) ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            if !inserted.isEmpty { return (key, KeyToken.prefix + key.id + "_" + secret) }
        }
        throw PostgresStoreError("could not allocate a key id")
    }

    /// Every key, oldest first.
    package func listKeys() async throws -> [APIKey] {
        var keys: [APIKey] = []
        for row in try await client.query(
            PostgresQuery(unsafeSQL: "SELECT \(Self.keyColumns) FROM api_keys ORDER BY created_at, id"), logger: logger
        ).collect() {
            keys.append(try Self.key(row))
        }
        return keys
    }

    /// Revokes key `id`; true if this call revoked it.
    package func revokeKey(id: String, now: Int64 = WallClock.nowSeconds()) async throws -> Bool {
        try await !client.query(
            "UPDATE api_keys SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING 1",
            logger: logger
        ).collect().isEmpty
    }

    /// The active key of `token`, or nil; compared in constant time, unknown ids included.
    package func verify(token: String, now: Int64 = WallClock.nowSeconds()) async throws -> APIKey? {
        guard let (id, secret) = KeyToken.parse(token) else { return nil }
        let presented = KeyToken.hash(secret)
        var found: (APIKey, [UInt8], [UInt8]?)?
        for row in try await client.query(
            PostgresQuery(
                unsafeSQL:
                    "SELECT \(Self.keyColumns), secret_hash, previous_secret_hash FROM api_keys WHERE id = $1",
                binds: {
                    var binds = PostgresBindings(); binds.append(id); return binds
                }()), logger: logger
        ).collect() {
            let cells = row.makeRandomAccess()
            let current = try cells[8].decode(ByteBuffer.self)
            let previous = try cells[9].decode(ByteBuffer?.self)
            found = (
                try Self.key(row), Array(current.readableBytesView), previous.map { Array($0.readableBytesView) }
            )
        }
        let stored = found?.1 ?? [UInt8](repeating: 0, count: 32)
        let previous = found?.2 ?? [UInt8](repeating: 0, count: 32)
        let matchesCurrent = KeyToken.constantTimeEquals(stored, presented)
        let matchesPrevious = KeyToken.constantTimeEquals(previous, presented)
        guard let key = found?.0, !key.isRevoked, !key.isExpired(at: now) else { return nil }
        if matchesCurrent { return key }
        if matchesPrevious, found?.2 != nil, let until = key.previousValidUntil, now < until { return key }
        return nil
    }

    /// Records when keys were last used.
    package func recordKeyUse(_ uses: [String: Int64]) async throws {
        guard !uses.isEmpty else { return }
        let ids = Array(uses.keys).sorted()
        let times = ids.map { uses[$0] ?? 0 }
        try await client.query(
            """
            UPDATE api_keys k SET last_used_at = GREATEST(coalesce(k.last_used_at, 0), u.at)
            FROM unnest(\(ids)::text[], \(times)::bigint[]) AS u (id, at) WHERE k.id = u.id
            """, logger: logger)
    }

    /// Documents of `app` received since `since` (epoch seconds), for the daily quota.
    package func documentsReceived(app: String, since: Int64) async throws -> Int {
        let milliseconds = since * 1_000
        for try await count in try await client.query(
            """
            SELECT count(*) FROM payloads
            WHERE app = (SELECT id FROM apps WHERE bundle_id = \(app)) AND received_at_ms >= \(milliseconds)
            """, logger: logger
        ).decode(Int64.self) {
            return Int(count)
        }
        return 0
    }

    /// One round trip to the server (readiness).
    package func ping() async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    /// The key of a row whose first columns are ``keyColumns``.
    static func key(_ row: PostgresRow) throws -> APIKey {
        let cells = row.makeRandomAccess()
        let (id, roleName, app) = (
            try cells[0].decode(String.self), try cells[1].decode(String.self), try cells[2].decode(String?.self)
        )
        let (created, revoked, expires) = (
            try cells[3].decode(Int64.self), try cells[4].decode(Int64?.self), try cells[5].decode(Int64?.self)
        )
        let (used, previousUntil) = (try cells[6].decode(Int64?.self), try cells[7].decode(Int64?.self))
        guard let role = Role(rawValue: roleName) else { throw PostgresStoreError("unknown role \(roleName)") }
        return APIKey(
            id: id, role: role, app: app, createdAt: created, revokedAt: revoked, expiresAt: expires, lastUsedAt: used,
            previousValidUntil: previousUntil)
    }
}

/// Dashboard sessions on PostgreSQL (migration `0004_sessions`), as on SQLite: the cookie's
/// opaque id, only its SHA-256 stored.
extension PostgresStore {
    /// Opens a session for `keyID` lasting `ttl` seconds; returns its id (the cookie value).
    /// Expired sessions are removed on the way.
    package func createSession(keyID: String, ttl: Int64, now: Int64 = WallClock.nowSeconds()) async throws -> String {
        let id = "lls_" + KeyToken.makeSecret()
        let hash = ByteBuffer(bytes: KeyToken.hash(id))
        let expires = now + ttl
        try await client.withConnection { connection in
            try await connection.query("DELETE FROM dashboard_sessions WHERE expires_at <= \(now)", logger: logger)
            try await connection.query(
                """
                INSERT INTO dashboard_sessions (id_hash, key_id, created_at, expires_at)
                VALUES (\(hash), \(keyID), \(now), \(expires))
                """, logger: logger)
        }
        return id
    }

    /// The key a live session signs in as, or nil (unknown, expired, key revoked or expired).
    package func sessionKey(_ sessionID: String, now: Int64 = WallClock.nowSeconds()) async throws -> APIKey? {
        guard sessionID.hasPrefix("lls_"), sessionID.utf8.count <= 64 else { return nil }
        let hash = ByteBuffer(bytes: KeyToken.hash(sessionID))
        let columns = Self.keyColumns.split(separator: ",").map { "k." + $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: ", ")
        var binds = PostgresBindings()
        binds.append(hash)
        binds.append(now)
        for row in try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(columns) FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
                    WHERE s.id_hash = $1 AND s.expires_at > $2 AND k.revoked_at IS NULL
                        AND (k.expires_at IS NULL OR k.expires_at > $2)
                    """, binds: binds), logger: logger
        ).collect() {
            return try Self.key(row)
        }
        return nil
    }

    /// Ends a session (logout); unknown ids are ignored.
    package func deleteSession(_ sessionID: String) async throws {
        let hash = ByteBuffer(bytes: KeyToken.hash(sessionID))
        try await client.query("DELETE FROM dashboard_sessions WHERE id_hash = \(hash)", logger: logger)
    }
}
