/// Where API keys are checked, for the server's key cache and its use recorder. Each store
/// implements it (SQLite: on its store threads; PostgreSQL: on its pool), so the server never
/// names a store.
package protocol KeyStore: Sendable {
    /// The live key for `token` (hash + constant-time compare, revocation and expiry checked), or nil.
    func verifyKey(token: String) async throws -> APIKey?
    /// Writes the keys' latest use (epoch seconds by key id), in one transaction.
    func recordKeyUses(_ uses: [String: Int64]) async throws
}

/// Where the dashboard keeps its sign-in sessions (only the SHA-256 of the cookie's opaque id),
/// shared by every node of a store.
package protocol SessionStore: Sendable {
    /// Opens a session for `keyID` lasting `ttl` seconds; returns its id (the cookie value).
    func startSession(keyID: String, ttl: Int64) async throws -> String
    /// The key a live session signs in as, or nil (unknown, expired, key revoked or expired).
    func sessionKey(forSession sessionID: String) async throws -> APIKey?
    /// Ends a session; unknown ids are ignored.
    func endSession(_ sessionID: String) async throws
}
