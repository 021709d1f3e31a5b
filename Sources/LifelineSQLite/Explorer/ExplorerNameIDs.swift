import LifelineStorage

/// The ids of the explorer's app states (`explorer_states`, migration 0022, `'all'` being 0) or
/// categories (`explorer_categories`, migration 0029, the catalog's seven being 1–7): its rows
/// name both by id. One per table and thread that binds or reads rows (the writer, the prepare's
/// reader, a query).
///
/// Ids read from the table are kept: a stored name's id never changes (nothing deletes one). An
/// id the writer makes is kept only once its transaction committed (``keepMade()``): until then it
/// is in ``made``, which ``forgetMade()`` empties when the transaction ends otherwise, and the
/// writer empties at the start of each write, so an id a rolled-back transaction made is never
/// bound again. Each map holds ``capacity`` names at most (clients choose their states' names),
/// emptied when full, as the writer's ``Interner`` is.
struct ExplorerNameIDs {
    static let capacity = 100_000
    private var known: [String: Int64] = [:]
    private var made: [String: Int64] = [:]
    private var names: [Int64: String] = [:]
    private let selectID: String
    private let insert: String
    private let selectName: String

    private init(table: String, column: String) {
        selectID = "SELECT id FROM \(table) WHERE \(column) = ?"
        insert = "INSERT INTO \(table) (\(column)) VALUES (?)"
        selectName = "SELECT \(column) FROM \(table) WHERE id = ?"
    }

    /// The app states' ids.
    static func states() -> Self { Self(table: "explorer_states", column: "state") }

    /// The categories' ids.
    static func categories() -> Self { Self(table: "explorer_categories", column: "category") }

    /// `name`'s id, made if it has none (the writer, inside its transaction).
    mutating func id(making name: String, on connection: Connection) throws(StoreError) -> Int64 {
        if let id = known[name] ?? made[name] { return id }
        if let id = try connection.first(selectID, [.text(name)], { $0.int64(0) }) {
            made[name] = id  // possibly made earlier in this transaction, not committed yet
            return id
        }
        try connection.run(insert, [.text(name)])
        let id = connection.lastInsertRowID
        made[name] = id
        return id
    }

    /// `name`'s stored id; `nil` when it has none, so no row of it is stored (a reader).
    mutating func id(of name: String, on connection: Connection) throws(StoreError) -> Int64? {
        if let id = known[name] { return id }
        guard let id = try connection.first(selectID, [.text(name)], { $0.int64(0) }) else { return nil }
        if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
        known[name] = id
        return id
    }

    /// The name of a stored id (a reader); `nil` for an id the table does not hold.
    mutating func name(of id: Int64, on connection: Connection) throws(StoreError) -> String? {
        if let name = names[id] { return name }
        guard let name = try connection.first(selectName, [.integer(id)], { $0.text(0) }) else { return nil }
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
