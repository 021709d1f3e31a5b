import LifelineStorage
import Synchronization

/// A few read-only connections (`PRAGMA query_only`) to the database file, opened on first use,
/// so aggregate reads run side by side and beside the writer (WAL readers do not block).
final class ReadPool: Sendable {
    /// One connection slot (a class: `Mutex` cannot live in an array).
    private final class Slot: Sendable {
        let mutex = Mutex<Connection?>(nil)
    }

    private let slots: [Slot]
    private let next = Atomic<Int>(0)
    private let path: String
    private let options: Database.Options

    /// Connections (and reader threads, ``StoreThreads/reads``) per database.
    static let defaultSize = 4

    init(path: String, options: Database.Options, size: Int = ReadPool.defaultSize) {
        self.path = path
        self.options = options
        self.slots = (0..<max(1, size)).map { _ in Slot() }
    }

    /// Runs `body` on a free connection (or waits for one).
    func withConnection<R: Sendable>(_ body: (Connection) throws(StoreError) -> R) throws(StoreError) -> R {
        let start = next.wrappingAdd(1, ordering: .relaxed).oldValue
        for offset in 0..<slots.count {
            let slot = slots[((start &+ offset) & Int.max) % slots.count]
            let result = try slot.mutex.withLockIfAvailable { (connection) throws(StoreError) -> sending R in
                try use(&connection, body)
            }
            if let result { return result }
        }
        return try slots[(start & Int.max) % slots.count].mutex.withLock {
            (connection) throws(StoreError) -> sending R in
            try use(&connection, body)
        }
    }

    private func use<R: Sendable>(
        _ connection: inout sending Connection?, _ body: (Connection) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        if connection == nil {
            let opened = try Connection(path: path, options: options)
            try opened.execute("PRAGMA query_only = 1")
            connection = opened
        }
        guard let connection else { throw StoreError(.internal, "internal storage error") }
        return try body(connection)
    }

    /// Runs `body` on a free connection inside one read transaction (`BEGIN` … `ROLLBACK`: nothing
    /// is written), so every query of `body` sees the same snapshot.
    func transaction<R: Sendable>(_ body: (Connection) throws -> R) throws -> R {
        let result = try withConnection { (connection) throws(StoreError) -> Result<R, any Error> in
            try connection.execute("BEGIN")
            defer { connection.rollbackQuietly() }
            return Result { try body(connection) }
        }
        return try result.get()
    }
}
