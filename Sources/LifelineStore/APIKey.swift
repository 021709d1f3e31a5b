/// An API key as stored (without its secret).
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

    package init(id: String, role: Role, app: String?, createdAt: Int64, revokedAt: Int64? = nil) {
        self.id = id
        self.role = role
        self.app = app
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Whether the key was revoked.
    package var isRevoked: Bool { revokedAt != nil }
}
