/// A store the analysis reads from: it runs `body` on the store's own threads (never on Swift's
/// cooperative pool) inside one read transaction, so every figure of one request comes from one
/// consistent snapshot. SQLite and PostgreSQL stores implement it.
package protocol AggregateSource: Sendable {
    func read<T: Sendable>(_ body: @escaping @Sendable (any AggregateReader) async throws -> T) async throws -> T
}

/// Runs ``Analyzer`` computations against an ``AggregateSource``: one call, one read transaction,
/// on the store's threads. The way servers, services and commands ask for figures.
///
/// With ``limits`` (the server's: query endpoints, dashboard, `/metrics`, alert evaluator), every
/// call is bounded: it takes one of ``ReadLimits/maxConcurrent`` slots (waiting at most
/// ``ReadLimits/queueWait``), and runs with a ``ReadBudget`` of source rows and time that the
/// store's readers enforce. Without (offline commands, tests), reads are unbounded.
package struct AnalysisRunner: Sendable {
    package let source: any AggregateSource
    package var conventions: SignpostConventions
    package var handlerFlag: HandlerFlagRule
    /// The bounds of every read; nil: unbounded.
    package let limits: ReadLimits?
    /// The slots of ``ReadLimits/maxConcurrent``, shared by every copy of this runner.
    package let gate: ReadGate?

    package init(
        source: any AggregateSource, conventions: SignpostConventions = .init(), handlerFlag: HandlerFlagRule = .init(),
        limits: ReadLimits? = nil
    ) {
        self.source = source
        self.conventions = conventions
        self.handlerFlag = handlerFlag
        self.limits = limits
        self.gate = limits.map { ReadGate(limit: $0.maxConcurrent) }
    }

    /// Runs `body` with an ``Analyzer`` over one read transaction, within ``limits``.
    package func analyze<T: Sendable>(_ body: @escaping @Sendable (Analyzer) async throws -> T) async throws -> T {
        let conventions = self.conventions
        let handlerFlag = self.handlerFlag
        let read = { @Sendable () async throws -> T in
            try await source.read { reader in
                try await body(Analyzer(reader: reader, conventions: conventions, handlerFlag: handlerFlag))
            }
        }
        guard let limits, let gate else { return try await read() }
        guard await gate.acquire(waitingAtMost: limits.queueWait) else {
            throw ReadLimitError(
                .busy,
                "\(gate.limit) reads are running (query.max_concurrent) and none finished within "
                    + "\(ReadLimits.text(limits.queueWait)); retry later")
        }
        defer { gate.release() }
        let budget = ReadBudget(maxRows: limits.maxSourceRows, timeout: limits.timeout)
        do {
            return try await ReadBudget.$current.withValue(budget) { try await read() }
        } catch {
            // A store that saw its statement interrupted or its rows refused answers what it hit.
            if let exceeded = budget.exceeded { throw exceeded }
            throw error
        }
    }
}
