/// A store the analysis reads from: it runs `body` on the store's own threads (never on Swift's
/// cooperative pool) inside one read transaction, so every figure of one request comes from one
/// consistent snapshot. SQLite and PostgreSQL stores implement it.
package protocol AggregateSource: Sendable {
    func read<T: Sendable>(_ body: @escaping @Sendable (any AggregateReader) async throws -> T) async throws -> T
}

/// Runs ``Analyzer`` computations against an ``AggregateSource``: one call, one read transaction,
/// on the store's threads. The way servers, services and commands ask for figures.
package struct AnalysisRunner: Sendable {
    package let source: any AggregateSource
    package var conventions: SignpostConventions
    package var handlerFlag: HandlerFlagRule

    package init(
        source: any AggregateSource, conventions: SignpostConventions = .init(), handlerFlag: HandlerFlagRule = .init()
    ) {
        self.source = source
        self.conventions = conventions
        self.handlerFlag = handlerFlag
    }

    /// Runs `body` with an ``Analyzer`` over one read transaction.
    package func analyze<T: Sendable>(_ body: @escaping @Sendable (Analyzer) async throws -> T) async throws -> T {
        let conventions = self.conventions
        let handlerFlag = self.handlerFlag
        return try await source.read { reader in
            try await body(Analyzer(reader: reader, conventions: conventions, handlerFlag: handlerFlag))
        }
    }
}
