import LifelineIngest
import LifelinePostgres
import Testing

/// The leader's retained documents (decoded at the door, folded without their raw copies).
@Suite("Retained documents")
struct RetainedItemsTests {
    @Test("nothing is held until enabled; past the bound the oldest go; held documents drop their received bytes")
    func boundedOldestFirst() throws {
        let source = try PostgresStoreTests.items(devices: 2, days: 1)
        let item = try #require(source.first)
        #expect(!item.raw.isEmpty)
        var retained = RetainedItems()
        retained.add(1, item)
        #expect(retained.count == 0, "a follower holds nothing")
        retained.enabled = true
        let extra = 10
        for id in 1...Int64(RetainedItems.limit + extra) { retained.add(id, item) }
        #expect(retained.count == RetainedItems.limit)
        let oldest = (1...Int64(extra)).compactMap { retained.take($0) }
        #expect(oldest.isEmpty, "the oldest went")
        let last = Int64(RetainedItems.limit + extra)
        let taken = retained.take(last)
        let newest = try #require(taken)
        #expect(newest.raw.isEmpty)
        #expect(newest.document == item.document)
        let again = retained.take(last)
        #expect(again == nil, "taken once")
        // Taken ids leave room: the next adds evict nothing still held until the bound again.
        let hundred = (Int64(extra + 1)..<Int64(extra + 101)).compactMap { retained.take($0) }
        #expect(hundred.count == 100)
        for id in Int64(RetainedItems.limit + extra + 1)...Int64(RetainedItems.limit + extra + 100) {
            retained.add(id, item)
        }
        #expect(retained.count == RetainedItems.limit - 1)
        let kept = retained.take(Int64(extra + 101))
        #expect(kept != nil, "not evicted while under the bound")
        retained.disable()
        #expect(retained.count == 0 && !retained.enabled)
    }
}
