/// Rollup increments of the payloads written in the current batch, as an append-only log.
///
/// The log follows the writer's savepoints: ``release()`` keeps what the request appended,
/// ``rollback()`` drops it, so a request rolled back by its savepoint is never counted. The whole
/// log is summed per rollup key and written once, just before COMMIT (see ``RollupFlusher``).
struct RollupDeltas {
    /// The key of a fine rollup cell; `os` and `device` are 0 at the version level.
    struct Cell: Hashable {
        var app: Int64
        /// Days since 1970-01-01 (UTC).
        var day: Int64
        var version: Int64
        var os: Int64
        var device: Int64

        /// This cell at the version level.
        var byVersion: Cell { Cell(app: app, day: day, version: version, os: 0, device: 0) }

        /// The rollup tables' key order (app, day, version, OS, device).
        static func precedes(_ x: Cell, _ y: Cell) -> Bool {
            (x.app, x.day, x.version, x.os, x.device) < (y.app, y.day, y.version, y.os, y.device)
        }
    }

    /// Metric payloads (one per payload from the writer, a cell's count when rebuilding) and their app time.
    struct Usage {
        var cell: Cell
        var payloads: Int64 = 1
        var foregroundMilliseconds: Double
        var backgroundMilliseconds: Double
    }

    /// An exit counter.
    struct Exit {
        var cell: Cell
        var state: Int64
        var reason: Int64
        var count: Int64
    }

    /// A signpost total.
    struct Signpost {
        var cell: Cell
        var category: Int64
        var name: Int64
        var count: Int64
    }

    /// A histogram bucket.
    struct Bucket {
        var cell: Cell
        var source: Int64
        var start: Double
        var end: Double
        var count: Int64
    }

    /// One diagnostic.
    struct Diagnostic {
        var cell: Cell
        var kind: String
        var crashGroup: Int64
    }

    private(set) var usage: [Usage] = []
    private(set) var exits: [Exit] = []
    private(set) var signposts: [Signpost] = []
    private(set) var buckets: [Bucket] = []
    private(set) var diagnostics: [Diagnostic] = []
    /// Lengths of the logs at the last released savepoint.
    private var marks = [0, 0, 0, 0, 0]

    var isEmpty: Bool {
        usage.isEmpty && exits.isEmpty && signposts.isEmpty && buckets.isEmpty && diagnostics.isEmpty
    }

    mutating func append(_ value: Usage) { usage.append(value) }
    mutating func append(_ value: Exit) { exits.append(value) }
    mutating func append(_ value: Signpost) { signposts.append(value) }
    mutating func append(_ value: Diagnostic) { diagnostics.append(value) }

    /// Appends a bucket unless it has no samples or no finite bound; a missing bound takes the other one.
    mutating func appendBucket(cell: Cell, source: Int64, start: Double?, end: Double?, count: Int64) {
        guard count > 0, let low = start ?? end, let high = end ?? start, low.isFinite, high.isFinite else { return }
        buckets.append(Bucket(cell: cell, source: source, start: low, end: high, count: count))
    }

    /// The request's savepoint was released: keep what it appended.
    mutating func release() {
        marks = [usage.count, exits.count, signposts.count, buckets.count, diagnostics.count]
    }

    /// The request's savepoint was rolled back: drop what it appended.
    mutating func rollback() {
        usage.removeSubrange(marks[0]...)
        exits.removeSubrange(marks[1]...)
        signposts.removeSubrange(marks[2]...)
        buckets.removeSubrange(marks[3]...)
        diagnostics.removeSubrange(marks[4]...)
    }

    /// Forgets everything (after a flush or when the batch is abandoned).
    mutating func clear() {
        usage.removeAll(keepingCapacity: true)
        exits.removeAll(keepingCapacity: true)
        signposts.removeAll(keepingCapacity: true)
        buckets.removeAll(keepingCapacity: true)
        diagnostics.removeAll(keepingCapacity: true)
        marks = [0, 0, 0, 0, 0]
    }

    /// The UTC day (days since 1970-01-01) of an epoch second.
    static func day(epochSeconds: Int64) -> Int64 {
        epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400
    }
}
