import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStorage
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

/// Fills databases with payloads on known October 2019 days (the fixtures' month).
private enum PruneFixtures {
    /// The day number of 2019-10-`day`.
    static func ordinal(_ day: Int) -> Int { 18_169 + day }

    /// Epoch seconds of 2019-10-`day` 00:00 UTC.
    static func start(_ day: Int) -> Int64 { Int64(ordinal(day)) * 86_400 }

    /// `perDay` metric payloads on each of `days` (two versions, two OSes), and crash diagnostics:
    /// group `old…` only on the first day, group `both…` on the first and the last day.
    static func fill(_ database: Database, days: ClosedRange<Int>, perDay: Int = 4, rawBytes: Int = 64) async throws {
        try await IngestWriter.withWriter(database: database, logger: .quiet) { writer in
            for day in days {
                var items: [IngestItem] = []
                for i in 0..<perDay {
                    let metric = RollupFixtures.metric(
                        version: i % 2 == 0 ? "4.1.0" : "4.2.0", day: day,
                        os: i % 3 == 0 ? "iPhone OS 18.0 (22A1)" : "iPhone OS 17.4 (21E219)")
                    let raw = [UInt8](repeating: UInt8(truncatingIfNeeded: day &* 31 &+ i), count: rawBytes)
                    items.append(Fixtures.item(.metric(metric), hashSeed: "m-\(day)-\(i)", raw: raw))
                }
                var crashes: [Diagnostic] = []
                if day == days.lowerBound {
                    crashes.append(Fixtures.crash(version: "4.1.0", fingerprint: "old0000000000000"))
                }
                if day == days.lowerBound || day == days.upperBound {
                    crashes.append(Fixtures.crash(version: "4.2.0", fingerprint: "both000000000000"))
                }
                if !crashes.isEmpty {
                    items.append(
                        Fixtures.item(
                            .diagnostic(Fixtures.diagnosticPayload(crashes, begin: start(day) + 3_600)),
                            hashSeed: "d-\(day)"))
                }
                _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: items))
            }
        }
    }

    /// Every figure the readers answer for `days`, for comparisons before and after pruning.
    struct Answers: Equatable {
        var usage: [UsageRow]
        var exits: [ExitRow]
        var signposts: [SignpostRow]
        var launches: [BucketRow]
        var launchesByOS: [BucketRow]
        var restoreDurationsByDevice: [BucketRow]
        var diagnostics: [DiagnosticRow]
        var diagnosticsByOS: [DiagnosticRow]

        var isEmpty: Bool {
            usage.isEmpty && exits.isEmpty && signposts.isEmpty && launches.isEmpty && launchesByOS.isEmpty
                && restoreDurationsByDevice.isEmpty && diagnostics.isEmpty && diagnosticsByOS.isEmpty
        }
    }

    static func answers(_ database: Database, _ from: Int, _ to: Int) async throws -> Answers {
        let days = DayRange(
            from: try #require(UTCDay(ordinal: ordinal(from))), to: try #require(UTCDay(ordinal: ordinal(to))))
        let scope = Scope(app: Fixtures.app, days: days, groupBy: [.version, .day])
        let reads = database.reads
        let launch = HistogramSource.metric("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey")
        return Answers(
            usage: try await reads.usage(scope), exits: try await reads.exits(scope),
            signposts: try await reads.signposts(scope, categories: []),
            launches: try await reads.buckets(scope, source: launch),
            launchesByOS: try await reads.buckets(scope.grouped(by: [.os]), source: launch),
            restoreDurationsByDevice: try await reads.buckets(
                scope.grouped(by: [.device, .day]),
                source: .signpost(category: "StateRestoration", name: "RestoreAttempt")),
            diagnostics: try await reads.diagnostics(scope),
            diagnosticsByOS: try await reads.diagnostics(scope.grouped(by: [.os])))
    }

    static func count(_ database: Database, _ sql: String) throws -> Int64 {
        try database.query(sql).first?.first?.integer ?? -1
    }
}

@Suite("Retention pruning")
struct PruneTests {
    /// 2019-10-30 12:00 UTC: with `data_days: 16` the first day kept is 2019-10-15.
    static let now = PruneFixtures.start(30) + 43_200

    @Test("prune removes exactly the days before the horizon; the days kept answer as before, the pruned ones as empty")
    func prunesExactlyTheOldDays() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await PruneFixtures.fill(database, days: 10...20)
        let keptBefore = try await PruneFixtures.answers(database, 15, 20)
        let oldBefore = try await PruneFixtures.answers(database, 10, 14)
        #expect(!keptBefore.isEmpty && !oldBefore.isEmpty)
        #expect(!keptBefore.launchesByOS.isEmpty && !keptBefore.diagnostics.isEmpty)
        let policy = RetentionPolicy(rawDays: 0, dataDays: 16, idempotencyDays: 0, alertHistoryDays: 0)
        let pruner = Pruner(database: database, policy: policy, options: .init(batchSize: 7, pause: .zero))

        // The dry run counts what goes and removes nothing.
        let payloadsBefore = try database.payloadCount()
        let planned = try await pruner.run(now: Self.now, dryRun: true)
        #expect(try database.payloadCount() == payloadsBefore)
        #expect(planned.dataKeptFrom == "2019-10-15")
        #expect(planned.payloads == 5 * 4 + 1)  // days 10…14: 4 metric payloads each, and day 10's diagnostics
        #expect(planned.rawDocuments == planned.payloads)
        #expect(planned.crashGroups == 1)

        let report = try await pruner.run(now: Self.now)
        #expect(report.payloads == planned.payloads)
        #expect(report.rawDocuments == planned.rawDocuments)
        #expect(report.rollupRows == planned.rollupRows && report.rollupRows > 0)
        #expect(report.crashGroups == 1)
        #expect(report.transactions > 5)  // small batches, not one long transaction

        // Nothing before the horizon is left, in any table; everything from it on is.
        let first = "'2019-10-15'"
        #expect(try PruneFixtures.count(database, "SELECT count(*) FROM payloads WHERE day < \(first)") == 0)
        #expect(try PruneFixtures.count(database, "SELECT count(*) FROM payloads WHERE day >= \(first)") == 6 * 4 + 1)
        for table in RollupFixtures.rollupTables {
            #expect(
                try PruneFixtures.count(
                    database, "SELECT count(*) FROM \(table) WHERE day < \(PruneFixtures.ordinal(15))") == 0)
        }
        for orphan in [
            "SELECT count(*) FROM payload_raw WHERE payload NOT IN (SELECT id FROM payloads)",
            "SELECT count(*) FROM exit_counts WHERE payload NOT IN (SELECT id FROM payloads)",
            "SELECT count(*) FROM histograms WHERE payload NOT IN (SELECT id FROM payloads)",
            "SELECT count(*) FROM diagnostics WHERE payload NOT IN (SELECT id FROM payloads)",
            "SELECT count(*) FROM diagnostic_frames WHERE diagnostic NOT IN (SELECT id FROM diagnostics)",
        ] {
            #expect(try PruneFixtures.count(database, orphan) == 0, "\(orphan)")
        }
        // The group seen only on day 10 is gone; the other one counts only its day-20 diagnostic.
        let groups = try database.crashGroups(app: Fixtures.app)
        #expect(groups.map(\.fingerprint) == ["both000000000000"])
        #expect(groups.first?.count == 1)
        #expect(groups.first?.firstSeen == PruneFixtures.start(20) + 3_600)

        // Kept days answer exactly as before; pruned days, and windows reaching into them, as if
        // nothing had been stored there.
        #expect(try await PruneFixtures.answers(database, 15, 20) == keptBefore)
        #expect(try await PruneFixtures.answers(database, 10, 20) == keptBefore)
        #expect(try await PruneFixtures.answers(database, 10, 14).isEmpty)

        // A second run finds nothing more to do.
        let again = try await pruner.run(now: Self.now)
        #expect(again.payloads == 0 && again.rollupRows == 0 && again.crashGroups == 0 && again.rawDocuments == 0)
    }

    @Test("days behind the horizon answer as empty while their rows are still being deleted")
    func horizonHidesDaysBeingPruned() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await PruneFixtures.fill(database, days: 10...20)
        let kept = try await PruneFixtures.answers(database, 15, 20)
        // What the pruner's first transaction writes, before any row is deleted.
        try database.execute("INSERT INTO retention_horizons (name, day) VALUES ('data', \(PruneFixtures.ordinal(15)))")
        #expect(try await PruneFixtures.answers(database, 10, 14).isEmpty)
        #expect(try await PruneFixtures.answers(database, 10, 20) == kept)
        let app = try #require(try await database.reads.apps().first)
        #expect(app.firstDay == "2019-10-15")
        #expect(app.metricPayloads == 6 * 4)
        #expect(try database.payloadCount() == 11 * 4 + 2)  // nothing deleted yet
    }

    @Test("raw documents past raw_days go while their payloads and figures stay; the next run continues")
    func rawDocumentsGoFirst() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await PruneFixtures.fill(database, days: 10...20)
        let before = try await PruneFixtures.answers(database, 10, 20)
        let policy = RetentionPolicy(rawDays: 14, dataDays: 0, idempotencyDays: 0, alertHistoryDays: 0)
        let pruner = Pruner(database: database, policy: policy, options: .init(batchSize: 3, pause: .zero))
        let planned = try await pruner.run(now: Self.now, dryRun: true)
        let report = try await pruner.run(now: Self.now)
        // Raw kept from 2019-10-17: days 10…16 lose theirs (7 × 4 metric + day 10's diagnostics).
        #expect(report.rawKeptFrom == "2019-10-17")
        #expect(report.rawDocuments == 7 * 4 + 1)
        #expect(planned.rawDocuments == report.rawDocuments)
        #expect(report.payloads == 0)
        #expect(try database.payloadCount() == 11 * 4 + 2)
        #expect(
            try PruneFixtures.count(
                database,
                "SELECT count(*) FROM payloads p JOIN payload_raw r ON r.payload = p.id WHERE p.day < '2019-10-17'")
                == 0)
        #expect(
            try PruneFixtures.count(
                database,
                "SELECT count(*) FROM payloads p JOIN payload_raw r ON r.payload = p.id WHERE p.day >= '2019-10-17'")
                == 4 * 4 + 1)
        #expect(try await PruneFixtures.answers(database, 10, 20) == before)
        // A day later one more day's raw documents go, and only those.
        let next = try await pruner.run(now: Self.now + 86_400)
        #expect(next.rawDocuments == 4)
    }

    @Test("idempotency records, alert history and expired sessions go by age")
    func recordsByAge() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        let now = WallClock.nowSeconds()
        try await IngestWriter.withWriter(database: database, logger: .quiet) { writer in
            let item = Fixtures.item(.metric(RollupFixtures.metric(version: "4.1.0", day: 21)), hashSeed: "idem")
            _ = try await writer.submit(IngestRequest(app: Fixtures.app, items: [item], idempotencyKey: "retry-1"))
        }
        for (id, at) in [(1, now - 100 * 86_400), (2, now - 80 * 86_400), (3, now)] {
            try database.execute(
                """
                INSERT INTO alert_history (id, rule, fingerprint, labels, from_state, to_state, at)
                VALUES (\(id), 'r', 'f', '{}', 'pending', 'firing', \(at))
                """)
        }
        let key = try database.createKey(role: .read, app: nil)
        try database.execute(
            """
            INSERT INTO dashboard_sessions (id_hash, key_id, created_at, expires_at)
            VALUES (zeroblob(32), '\(key.key.id)', \(now - 7_200), \(now - 3_600))
            """)
        let policy = RetentionPolicy(rawDays: 0, dataDays: 0, idempotencyDays: 7, alertHistoryDays: 90)
        let pruner = Pruner(database: database, policy: policy, options: .init(pause: .zero))

        let early = try await pruner.run(now: now + 6 * 86_400)
        #expect(early.idempotencyKeys == 0)
        #expect(early.alertHistory == 1)  // 106 days old at that run; the next is 86
        #expect(early.dashboardSessions == 1)
        let late = try await pruner.run(now: now + 8 * 86_400)
        #expect(late.idempotencyKeys == 1)
        #expect(late.alertHistory == 0)  // 88 days old: kept
        #expect(try PruneFixtures.count(database, "SELECT count(*) FROM idempotency_keys") == 0)
        #expect(try database.query("SELECT id FROM alert_history ORDER BY id") == [[.integer(2)], [.integer(3)]])
        #expect(try database.payloadCount() == 1)  // data kept forever
    }

    @Test("a new file uses incremental vacuum: pruned pages are returned and the file stops growing")
    func fileStopsGrowing() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        #expect(try database.query("PRAGMA auto_vacuum") == [[.integer(2)]])
        let policy = RetentionPolicy(rawDays: 0, dataDays: 2, idempotencyDays: 0, alertHistoryDays: 0)
        let pruner = Pruner(database: database, policy: policy, options: .init(batchSize: 50, pause: .zero))
        var pages: [Int64] = []
        var returned = 0
        for day in 1...9 {
            try await PruneFixtures.fill(database, days: day...day, perDay: 60, rawBytes: 16_000)
            let report = try await pruner.run(now: PruneFixtures.start(day) + 43_200)
            returned += report.returnedPages
            try database.checkpoint()
            pages.append(try database.query("PRAGMA page_count").first?.first?.integer ?? 0)
        }
        // Two days of ~1 MB each are kept; without pruning the file would hold nine.
        #expect(returned > 0)
        let steady = pages[2...]
        #expect((steady.max() ?? 0) <= (pages[2] * 6) / 5, "page counts per day: \(pages)")
        // 9 days unpruned: ~9 MB, i.e. ~9 × (1 MB / page size) pages.
        let pageSize = try database.query("PRAGMA page_size").first?.first?.integer ?? 1
        #expect(pages[8] < 9 * ((1 << 20) / pageSize), "page counts per day: \(pages)")
        #expect(try PruneFixtures.count(database, "SELECT count(DISTINCT day) FROM payloads") == 2)
    }
}
