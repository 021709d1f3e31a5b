/// An API key as stored (never its secret).
package struct APIKey: Sendable, Equatable {
    /// Public short id, the `<id>` of the token `ll_<id>_<secret>`.
    package var id: String
    package var role: Role
    /// Bundle id the key is scoped to (required for ingest keys, absent for admin keys).
    package var app: String?
    /// Epoch seconds.
    package var createdAt: Int64
    /// Epoch seconds; `nil` while the key is active.
    package var revokedAt: Int64?
    /// Epoch seconds after which the key no longer works; `nil` for no expiry.
    package var expiresAt: Int64?
    /// Epoch seconds of the last request seen with this key (recorded in batches, at most a
    /// minute late); `nil` when never used since this was recorded.
    package var lastUsedAt: Int64?
    /// After `keys rotate`: epoch seconds until which the previous secret is still accepted.
    package var previousValidUntil: Int64?

    package init(
        id: String, role: Role, app: String?, createdAt: Int64, revokedAt: Int64? = nil, expiresAt: Int64? = nil,
        lastUsedAt: Int64? = nil, previousValidUntil: Int64? = nil
    ) {
        self.id = id
        self.role = role
        self.app = app
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.previousValidUntil = previousValidUntil
    }

    /// Whether the key was revoked.
    package var isRevoked: Bool { revokedAt != nil }

    /// Whether the key has expired at `now` (epoch seconds).
    package func isExpired(at now: Int64) -> Bool {
        if let expiresAt { return now >= expiresAt }
        return false
    }
}

extension APIKey {
    /// The app of a key about to be created (`nil` for none), once the role, app and expiry agree:
    /// ingest and symbols keys need an app, admin keys have none, an expiry is in the future.
    package static func validatedApp(
        role: Role, app: String?, expiresAt: Int64?, now: Int64
    ) throws(StoreError) -> String? {
        let app = app.flatMap { $0.isEmpty ? nil : $0 }
        switch role {
        case .ingest where app == nil, .symbols where app == nil:
            throw StoreError(.invalid, "an \(role.rawValue) key needs an app bundle id")
        case .admin where app != nil:
            throw StoreError(.invalid, "an admin key cannot be scoped to an app")
        default:
            break
        }
        if let app, app.utf8.count > 255 {
            throw StoreError(.invalid, "the app bundle id must be at most 255 bytes")
        }
        if let expiresAt, expiresAt <= now {
            throw StoreError(.invalid, "the expiry must be in the future")
        }
        return app
    }
}
