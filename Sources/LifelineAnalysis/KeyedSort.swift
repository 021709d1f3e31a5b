extension Array {
    /// The elements in ``GroupKey`` order (`key`), then in `areInIncreasingOrder` within a key.
    ///
    /// Each distinct key is ranked once and the sort compares ranks: a figure list of thousands of
    /// rows (exits by version and day) sorted by its keys directly compared their strings and
    /// versions at every step, most of such a query's time.
    package func sorted(
        byKey key: (Element) -> GroupKey, then areInIncreasingOrder: (Element, Element) -> Bool
    ) -> [Element] {
        let keys = map(key)
        var ranks: [GroupKey: Int] = [:]
        for key in keys { ranks[key] = 0 }
        for (rank, key) in ranks.keys.sorted().enumerated() { ranks[key] = rank }
        let rank = keys.map { ranks[$0] ?? 0 }
        return indices.sorted { a, b in
            rank[a] != rank[b] ? rank[a] < rank[b] : areInIncreasingOrder(self[a], self[b])
        }.map { self[$0] }
    }
}
