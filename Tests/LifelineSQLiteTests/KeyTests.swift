import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("API keys")
struct KeyTests {
    @Test("a created key verifies with its token and only its token")
    func createAndVerify() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let (key, token) = try database.createKey(role: .ingest, app: "com.example.app")
        #expect(key.role == .ingest && key.app == "com.example.app" && !key.isRevoked)
        #expect(token.hasPrefix("ll_\(key.id)_"))
        #expect((8...12).contains(key.id.count))
        let secret = String(token.dropFirst(4 + key.id.count))
        #expect(secret.count >= 43)
        #expect(try database.verify(token: token) == key)

        // The secret is not stored, only its hash.
        let stored = try database.query("SELECT secret_hash FROM api_keys WHERE id = ?", [.text(key.id)])
        #expect(stored.first?.first?.blob?.count == 32)
        #expect(
            try database.query("SELECT count(*) FROM api_keys WHERE instr(secret_hash, ?) > 0", [.text(secret)]) == [
                [.integer(0)]
            ])

        var wrong = Array(token)
        wrong[wrong.count - 1] = wrong[wrong.count - 1] == "A" ? "B" : "A"
        #expect(try database.verify(token: String(wrong)) == nil)
        #expect(try database.verify(token: "ll_\(key.id)_") == nil)
        #expect(try database.verify(token: "ll_zzzzzzzzzz_\(secret)") == nil)
        #expect(try database.verify(token: "Bearer \(token)") == nil)
        #expect(try database.verify(token: "") == nil)
        #expect(try database.verify(token: token + "x") == nil)
    }

    @Test("revoked keys no longer verify")
    func revoke() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let (key, token) = try database.createKey(role: .read, app: nil)
        let (other, otherToken) = try database.createKey(role: .admin, app: nil)
        #expect(try database.revokeKey(id: key.id))
        #expect(try !database.revokeKey(id: key.id))
        #expect(try !database.revokeKey(id: "nosuchkey0"))
        #expect(try database.verify(token: token) == nil)
        #expect(try database.verify(token: otherToken) == other)
        let listed = try database.listKeys()
        #expect(listed.count == 2)
        #expect(listed.first { $0.id == key.id }?.isRevoked == true)
        #expect(listed.first { $0.id == other.id }?.isRevoked == false)
    }

    @Test("ingest keys need an app and admin keys cannot have one")
    func scopeValidation() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        #expect(throws: StoreError.self) { try database.createKey(role: .ingest, app: nil) }
        #expect(throws: StoreError.self) { try database.createKey(role: .ingest, app: "") }
        #expect(throws: StoreError.self) { try database.createKey(role: .admin, app: "com.example.app") }
        #expect(try database.createKey(role: .read, app: "com.example.app").key.app == "com.example.app")
        #expect(try database.listKeys().count == 1)
    }

    @Test("tokens are unique and hashes compare in constant time")
    func tokensAndComparison() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let tokens = try (0..<20).map { _ in try database.createKey(role: .read, app: nil).token }
        #expect(Set(tokens).count == 20)
        #expect(Set(try database.listKeys().map(\.id)).count == 20)
        #expect(KeyToken.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!KeyToken.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!KeyToken.constantTimeEquals([9, 2, 3], [1, 2, 3]))
        #expect(!KeyToken.constantTimeEquals([1, 2], [1, 2, 3]))
        #expect(KeyToken.parse("ll_abcdefgh23_se_cr-et")! == ("abcdefgh23", "se_cr-et"))
        #expect(KeyToken.parse("ll_ABCDEFGH23_secret") == nil)
        #expect(KeyToken.parse("ll_short_secret") == nil)
    }

    @Test("a key created with an expiry stops verifying at that time, and a past expiry is refused")
    func expiry() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let now: Int64 = 1_800_000_000
        let (key, token) = try database.createKey(role: .read, app: nil, expiresAt: now + 90 * 86_400, now: now)
        #expect(key.expiresAt == now + 90 * 86_400)
        #expect(try database.verify(token: token, now: now + 90 * 86_400 - 1) != nil)
        #expect(try database.verify(token: token, now: now + 90 * 86_400) == nil)
        #expect(throws: StoreError.self) { try database.createKey(role: .read, app: nil, expiresAt: now, now: now) }
        #expect(try database.listKeys().first?.expiresAt == now + 90 * 86_400)
    }

    @Test("rotation: the new secret works, the old one only during its grace period; ids, roles and apps stay")
    func rotation() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let now: Int64 = 1_800_000_000
        let (key, old) = try database.createKey(role: .ingest, app: "com.example.app", now: now)
        let (rotated, new) = try database.rotateKey(id: key.id, grace: 3_600, now: now + 10)
        #expect(new != old && new.hasPrefix("ll_\(key.id)_"))
        #expect(rotated.id == key.id && rotated.role == .ingest && rotated.app == "com.example.app")
        #expect(rotated.previousValidUntil == now + 3_610)
        #expect(try database.verify(token: new, now: now + 20)?.id == key.id)
        #expect(try database.verify(token: old, now: now + 3_609)?.id == key.id)
        #expect(try database.verify(token: old, now: now + 3_610) == nil)
        #expect(try database.verify(token: new, now: now + 999_999)?.id == key.id)
        // A second rotation ends the first one's grace: the oldest secret is gone at once.
        let (_, newest) = try database.rotateKey(id: key.id, grace: 60, now: now + 30)
        #expect(try database.verify(token: old, now: now + 31) == nil)
        #expect(try database.verify(token: new, now: now + 31) != nil)
        #expect(try database.verify(token: newest, now: now + 31) != nil)
        // Revoked keys cannot be rotated back to life.
        #expect(try database.revokeKey(id: key.id, now: now + 40))
        #expect(throws: StoreError.self) { try database.rotateKey(id: key.id, grace: 60, now: now + 50) }
        #expect(try database.verify(token: newest, now: now + 41) == nil)
    }

    @Test("last use is recorded in one batch and only moves forward")
    func lastUse() throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let (a, _) = try database.createKey(role: .read, app: nil)
        let (b, _) = try database.createKey(role: .admin, app: nil)
        #expect(try database.listKeys().allSatisfy { $0.lastUsedAt == nil })
        try database.recordKeyUse([a.id: 1_800_000_100, b.id: 1_800_000_050])
        try database.recordKeyUse([a.id: 1_800_000_000])
        let keys = Dictionary(uniqueKeysWithValues: try database.listKeys().map { ($0.id, $0.lastUsedAt) })
        #expect(keys[a.id] == 1_800_000_100)
        #expect(keys[b.id] == 1_800_000_050)
    }
}
