/// Values numbered in the order they first came: a key of such numbers hashes, compares and
/// copies without reference counting (the fold's rows name their cells and names this way).
struct Interned<Value: Hashable> {
    /// The values, by their number.
    private(set) var values: [Value] = []
    private var numbers: [Value: Int32] = [:]

    /// The number of `value`, made if it has none.
    mutating func id(_ value: Value) -> Int32 {
        if let id = numbers[value] { return id }
        let id = Int32(values.count)
        values.append(value)
        numbers[value] = id
        return id
    }

    /// The number of `value`, if it has one.
    func id(of value: Value) -> Int32? { numbers[value] }

    mutating func reserveCapacity(_ count: Int) {
        values.reserveCapacity(count)
        numbers.reserveCapacity(count)
    }
}

extension Interned where Value: Comparable {
    /// The rank of each value (by its number) in sorted order.
    var ranks: [Int32] {
        var ranks = [Int32](repeating: 0, count: values.count)
        for (rank, index) in values.indices.sorted(by: { values[$0] < values[$1] }).enumerated() {
            ranks[index] = Int32(rank)
        }
        return ranks
    }
}

extension Interned: Sendable where Value: Sendable {}
