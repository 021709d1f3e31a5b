#if canImport(Glibc)
    import Glibc
#endif
import Logging

/// The WAL's hard cap, kept by the writer thread. The ``Checkpointer`` truncates the log once it
/// passes the soft cap but gives up after 50 ms when a reader or the writer's transaction holds
/// it; under a continuous door with the explorer's reads the log still reached 172–224 MB over
/// 35 s of the reference load (BENCHMARKS.md, "The WAL's cap"). Past `bytes`, the writer itself
/// truncates it right after a commit, when it holds no transaction: it waits for the readers
/// (its connection's busy timeout, 5 s by default), and the door waits with it. So the log ends
/// at most one transaction past `bytes`, unless a reader holds its snapshot longer than that
/// wait: nothing can restart the log under it, so the writer tries again only after
/// ``retryDelay`` (not at every commit, each waiting the whole timeout), and the log stays past
/// the cap until that reader ends.
struct WALLimit {
    /// The log's file.
    let path: String
    /// The cap, in bytes.
    let bytes: Int
    /// Time between two attempts when one found a reader it could not wait out.
    static let retryDelay: Duration = .seconds(1)
    private var retryAfter: ContinuousClock.Instant?

    init(path: String, bytes: Int) {
        self.path = path
        self.bytes = bytes
    }

    /// Truncates the log when its file is past the cap; a no-op (one `stat`) otherwise.
    mutating func enforce(on connection: Connection, logger: Logger) {
        if let retryAfter, ContinuousClock.now < retryAfter { return }
        guard size > bytes else { return }
        let started = ContinuousClock.now
        let busy = (try? connection.first("PRAGMA wal_checkpoint(TRUNCATE)", []) { $0.int64(0) }) ?? 1
        retryAfter = busy == 0 ? nil : ContinuousClock.now + Self.retryDelay
        logger.notice(
            "the WAL passed its hard cap: the writer truncates it (waiting for the readers)",
            metadata: [
                "cap_bytes": "\(bytes)", "truncated": "\(busy == 0)",
                "waited_ms": "\((ContinuousClock.now - started) / .milliseconds(1))",
            ])
    }

    /// The log's size in bytes (0 when it does not exist).
    var size: Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
