import CSQLite
import LifelineAnalysis
import LifelineStorage

extension Connection {
    /// SQLite virtual-machine steps between two looks at the clock.
    static let progressSteps: Int32 = 4_096

    /// Runs `body` with `budget` bound to this connection: rows read through ``query(_:_:_:)`` and
    /// ``count(_:)`` are counted into it, and a progress handler interrupts the running statement
    /// (`SQLITE_INTERRUPT`) once its deadline has passed. Any error `body` throws after the budget
    /// ran out is answered as the ``ReadLimitError`` it hit. The handler is removed after, so the
    /// connection goes back to its pool as it was.
    func bounded<T>(by budget: ReadBudget?, _ body: () throws -> T) throws -> T {
        guard let budget else { return try body() }
        try budget.checkDeadline()
        self.budget = budget
        let context = Unmanaged.passRetained(budget)
        sqlite3_progress_handler(
            handle, Self.progressSteps,
            { context in
                guard let context else { return 0 }
                let budget = Unmanaged<ReadBudget>.fromOpaque(context).takeUnretainedValue()
                guard budget.isExpired else { return 0 }
                budget.expired()
                return 1
            }, context.toOpaque())
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            context.release()
            self.budget = nil
        }
        do {
            return try body()
        } catch {
            if let exceeded = budget.exceeded { throw exceeded }
            throw error
        }
    }

    /// Counts `rows` materialised rows into the bound read budget, if any (see ``bounded(by:_:)``).
    func count(_ rows: Int = 1) throws(StoreError) {
        guard let budget else { return }
        do {
            try budget.take(rows)
        } catch {
            // Typed as a store error on the way out of SQLite code; ``bounded(by:_:)`` answers the
            // budget's own error.
            throw StoreError(.invalid, error.message, cause: "read budget")
        }
    }
}
