import LifelineModel
import LifelinePostgres
import LifelineStore

/// Where the dashboard keeps its sign-in sessions (only the SHA-256 of the cookie's opaque id),
/// shared by every node of a store.
protocol DashboardSessions: Sendable {
    /// Opens a session for `keyID` lasting `ttl` seconds; returns its id (the cookie value).
    func createSession(keyID: String, ttl: Int64) async throws -> String
    /// The key a live session signs in as, or nil (unknown, expired, key revoked or expired).
    func sessionKey(_ sessionID: String) async throws -> APIKey?
    /// Ends a session; unknown ids are ignored.
    func deleteSession(_ sessionID: String) async throws
}

/// The sessions of a SQLite ``Database``, each call on a store thread.
struct SQLiteDashboardSessions: DashboardSessions {
    let database: Database

    func createSession(keyID: String, ttl: Int64) async throws -> String {
        try await database.write { try $0.createSession(keyID: keyID, ttl: ttl) }
    }

    func sessionKey(_ sessionID: String) async throws -> APIKey? {
        try await database.write { try $0.sessionKey(sessionID) }
    }

    func deleteSession(_ sessionID: String) async throws {
        try await database.write { try $0.deleteSession(sessionID) }
    }
}

extension PostgresStore: DashboardSessions {
    func createSession(keyID: String, ttl: Int64) async throws -> String {
        try await createSession(keyID: keyID, ttl: ttl, now: WallClock.nowSeconds())
    }

    func sessionKey(_ sessionID: String) async throws -> APIKey? {
        try await sessionKey(sessionID, now: WallClock.nowSeconds())
    }
}
