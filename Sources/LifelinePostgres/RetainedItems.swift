import LifelineIngest

/// Documents this node appended, decoded, kept for the fold when this node is the leader (it
/// then folds them without reading and decoding their raw copies again). Bounded: past
/// ``limit`` the oldest go, and the fold reads them from their raw copies.
package struct RetainedItems {
    /// More than a fold that keeps up with the door finds waiting (137–213 documents at ~560 a
    /// second; half a fold part, ``PostgresStore/foldPart``). Behind the door, the oldest go
    /// first and a backlog is read from the raw copies whatever the bound; 4,096 (~13 KB each,
    /// decoded) held ~40–55 MB more at the leader's peak than 1,024, and 1,024 ~15 MB more than
    /// 256, for the same door and drain rates (BENCHMARKS.md, "A PostgreSQL leader retains one
    /// batch", "A PostgreSQL node's malloc").
    package static let limit = 256
    package var enabled = false
    var items: [Int64: IngestItem] = [:]
    /// Ids in the order they came, from `head` on (a queue without moving the array per add).
    var order: [Int64] = []
    var head = 0

    package init() {}

    /// Documents held.
    package var count: Int { items.count }

    package mutating func add(_ id: Int64, _ item: IngestItem) {
        guard enabled else { return }
        // The fold needs the decoded document, not the bytes received (stored already): ~2.7 KB
        // of a reference document's ~15 KB held.
        var item = item
        item.raw = []
        items[id] = item
        order.append(id)
        while items.count > Self.limit, head < order.count {
            items[order[head]] = nil
            head += 1
        }
        // Ids the fold took stay in the queue until it is compacted (amortized: every `limit` adds).
        if order.count - head > 2 * Self.limit || head > Self.limit {
            order = order[head...].filter { items[$0] != nil }
            head = 0
        }
    }

    package mutating func take(_ id: Int64) -> IngestItem? { items.removeValue(forKey: id) }

    package mutating func disable() {
        enabled = false
        items = [:]
        order = []
        head = 0
    }
}
