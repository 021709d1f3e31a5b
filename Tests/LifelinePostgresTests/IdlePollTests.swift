import LifelineIngest
import LifelinePostgres
import PostgresNIO
import Testing

/// The idle leader's poll (``PostgresStore/pendingExists``, every 10 ms while nothing waits) on a
/// table of many folded payloads: an index range, never a scan of every payload.
extension PostgresAggregatorTests {
    /// The plan of `sql` on `connection`, one line per node.
    static func plan(_ sql: String, on connection: PostgresConnection) async throws -> [String] {
        var lines: [String] = []
        for try await line in try await connection.query(
            PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF) " + sql), logger: logger
        ).decode(String.self) {
            lines.append(line)
        }
        return lines
    }

    @Test(
        "the idle leader's poll reads the xact index over 40,000 folded payloads, where the unbounded EXISTS scanned them all"
    )
    func idlePollUsesTheIndex() async throws {
        guard let store = try await PostgresStoreTests.store() else { return }
        defer { Task { await store.shutdown() } }
        let items = try Self.metricItems(devices: 20, days: 2, seed: 41)
        _ = try await Self.folded(items, into: store)
        let connection = try await PostgresConnection.connect(
            configuration: try store.location.connectionConfiguration(), id: 9, logger: Self.logger)
        defer { Task { try? await connection.close() } }
        // Copies of the folded rows under other hashes, in transactions long finished (xact 1):
        // below the watermark, as a day of folded documents is.
        try await connection.query(
            """
            INSERT INTO payloads (app, kind, app_version, build, os_version, device_type, region, arch, day,
                received_at_ms, content_hash, format, device_day, xact)
            SELECT p.app, p.kind, p.app_version, p.build, p.os_version, p.device_type, p.region, p.arch, p.day,
                p.received_at_ms, sha256(p.content_hash || int4send(g)), p.format, p.device_day, 1
            FROM payloads p CROSS JOIN generate_series(1, (40000 / (SELECT count(*) FROM payloads))::int) g
            """, logger: Self.logger)
        try await connection.query("ANALYZE payloads", logger: Self.logger)
        #expect(try await Self.count("SELECT count(*) FROM payloads", on: connection) >= 40_000)

        let poll = try await Self.plan(PostgresStore.pendingExists, on: connection)
        #expect(poll.contains { $0.contains("Index") && $0.contains("payloads_xact") }, "\(poll)")
        #expect(!poll.contains { $0.contains("Seq Scan on payloads") }, "\(poll)")
        // The statement it replaced: the same condition without the upper bound.
        let unbounded = try await Self.plan(
            "SELECT EXISTS (SELECT 1 FROM payloads p WHERE \(PostgresStore.pendingCondition))", on: connection)
        #expect(unbounded.contains { $0.contains("Seq Scan on payloads") }, "\(unbounded)")
        // And it still answers: nothing waits, then a new document does.
        #expect(try await Self.count("SELECT (\(PostgresStore.pendingExists))::int::bigint", on: connection) == 0)
        let extra = Self.copies(of: Array(items.prefix(1)), salt: 0x5A)
        _ = try await store.write(IngestRequest(app: Self.app, items: extra))
        #expect(try await Self.count("SELECT (\(PostgresStore.pendingExists))::int::bigint", on: connection) == 1)
    }
}
