extension Sequence {
    /// `map` with an async transform, applied in order, one element at a time (the figures of one
    /// read transaction are queried one after another on its one connection).
    package func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        result.reserveCapacity(underestimatedCount)
        for element in self {
            result.append(try await transform(element))
        }
        return result
    }
}
