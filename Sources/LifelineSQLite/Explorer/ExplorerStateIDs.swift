import LifelineStorage

/// The ids of the explorer's app states (`explorer_states`, migration 0022): its rows name their
/// state by id, `'all'` being 0. One per thread that binds or reads rows (the writer, the
/// prepare's reader, a query).
///
/// Ids read from the table are kept: a stored state's id never changes (nothing deletes one). An
/// id the writer makes is kept only once its transaction committed (``keepMade()``): until then it
/// is in ``made``, which ``forgetMade()`` empties when the transaction ends otherwise, and the
/// writer empties at the start of each write, so an id a rolled-back transaction made is never
/// bound again. Each map holds ``capacity`` states at most (clients choose their states' names),
/// emptied when full, as the writer's ``Interner`` is.
struct ExplorerStateIDs {
    static let capacity = 100_000
    private var known: [String: Int64] = [:]
    private var made: [String: Int64] = [:]
    private var names: [Int64: String] = [:]

    private static let selectID = "SELECT id FROM explorer_states WHERE state = ?"
    private static let insert = "INSERT INTO explorer_states (state) VALUES (?)"
    private static let selectState = "SELECT state FROM explorer_states WHERE id = ?"

    /// `state`'s id, made if it has none (the writer, inside its transaction).
    mutating func id(making state: String, on connection: Connection) throws(StoreError) -> Int64 {
        if let id = known[state] ?? made[state] { return id }
        if let id = try connection.first(Self.selectID, [.text(state)], { $0.int64(0) }) {
            made[state] = id  // possibly made earlier in this transaction, not committed yet
            return id
        }
        try connection.run(Self.insert, [.text(state)])
        let id = connection.lastInsertRowID
        made[state] = id
        return id
    }

    /// `state`'s stored id; `nil` when it has none, so no row of it is stored (a reader).
    mutating func id(of state: String, on connection: Connection) throws(StoreError) -> Int64? {
        if let id = known[state] { return id }
        guard let id = try connection.first(Self.selectID, [.text(state)], { $0.int64(0) }) else { return nil }
        if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
        known[state] = id
        return id
    }

    /// The state of a stored id (a reader); `nil` for an id the table does not hold.
    mutating func state(of id: Int64, on connection: Connection) throws(StoreError) -> String? {
        if let name = names[id] { return name }
        guard let name = try connection.first(Self.selectState, [.integer(id)], { $0.text(0) }) else { return nil }
        if names.count >= Self.capacity { names.removeAll(keepingCapacity: true) }
        names[id] = name
        return name
    }

    /// The writer's transaction committed: the ids it made are stored.
    mutating func keepMade() {
        if known.count + made.count > Self.capacity { known.removeAll(keepingCapacity: true) }
        known.merge(made) { _, new in new }
        made.removeAll(keepingCapacity: true)
    }

    /// The writer's transaction did not commit (or a new write begins): ids made since the last
    /// commit may not exist.
    mutating func forgetMade() {
        made.removeAll(keepingCapacity: true)
    }
}
