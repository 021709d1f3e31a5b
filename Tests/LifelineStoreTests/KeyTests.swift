import LifelineStore
import Testing

@Suite("API keys")
struct KeyTests {
    @Test("a created key verifies with its token and only its token")
    func createAndVerify() throws {
        let temp = TemporaryDatabase()
        let database = try temp.open()
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
        let temp = TemporaryDatabase()
        let database = try temp.open()
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
        let temp = TemporaryDatabase()
        let database = try temp.open()
        #expect(throws: StoreError.self) { try database.createKey(role: .ingest, app: nil) }
        #expect(throws: StoreError.self) { try database.createKey(role: .ingest, app: "") }
        #expect(throws: StoreError.self) { try database.createKey(role: .admin, app: "com.example.app") }
        #expect(try database.createKey(role: .read, app: "com.example.app").key.app == "com.example.app")
        #expect(try database.listKeys().count == 1)
    }

    @Test("tokens are unique and hashes compare in constant time")
    func tokensAndComparison() throws {
        let temp = TemporaryDatabase()
        let database = try temp.open()
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
}
