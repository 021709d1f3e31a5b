import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineSQLite
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("Analyzer over the store")
struct AnalyzerOverStoreTests {
    /// One payload with known handler, restoration and duration signposts.
    private static func payload() -> MetricPayload {
        var metric = RollupFixtures.metric(version: "5.0.0", day: 21)
        metric.signposts = [
            SignpostMetric(category: "BackgroundTasks", name: "SyncEntered", totalCount: 10),
            SignpostMetric(category: "BackgroundTasks", name: "SyncExited", totalCount: 7),
            SignpostMetric(category: "BackgroundTasks", name: "UploadEntered", totalCount: 12),
            SignpostMetric(category: "BackgroundTasks", name: "UploadExited", totalCount: 12),
            SignpostMetric(
                category: "StateRestoration", name: "RestoreAttempt", totalCount: 3_000,
                durations: Fixtures.histogram([(0, 50, 20), (51, 200, 9), (201, 1_000, 2)])),
            SignpostMetric(category: "StateRestoration", name: "RestoreFailed", totalCount: 7),
        ]
        return metric
    }

    @Test("handlers, restoration error rate and percentiles come out exact from stored rollups")
    func figuresFromStore() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await IngestWriter.withWriter(database: database) { writer in
            _ = try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(Self.payload()), hashSeed: "an")]))
        }
        let scope = Scope(app: Fixtures.app, days: DayRange(from: "2019-10-01", to: "2019-10-31"))

        let handlers = try await database.analyze { try await $0.handlers(scope) }
        let sync = try #require(handlers.first { $0.handler == "Sync" })
        #expect(sync.entered == 10 && sync.exited == 7 && sync.imbalance == 3 && sync.flagged)
        let upload = try #require(handlers.first { $0.handler == "Upload" })
        #expect(upload.entered == 12 && upload.exited == 12 && upload.imbalance == 0 && !upload.flagged)

        let restoration = try #require(try await database.analyze { try await $0.restoration(scope) }.first)
        #expect(restoration.attempts == 3_000 && restoration.failures == 7)
        #expect(restoration.errorRate == 7.0 / 3_000.0)
        #expect(restoration.durationSamples == 31)
        // Rank 15.5 of 31 falls in the first bucket: 0 + 50 × 15.5 / 20.
        #expect(restoration.p50Milliseconds == 38.75)

        let percentiles = try await database.analyze {
            try await $0.percentiles(
                scope, source: .signpost(category: "StateRestoration", name: "RestoreAttempt"))
        }
        #expect(percentiles.count == 1)
        #expect(percentiles.first?.p50 == 38.75)
        #expect(percentiles.first?.samples == 31)
    }

    @Test("a ratio keeps one value per handler, and a plain ratio one per group")
    func ratiosKeepHandlerLabels() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await IngestWriter.withWriter(database: database) { writer in
            _ = try await writer.submit(
                IngestRequest(app: Fixtures.app, items: [Fixtures.item(.metric(Self.payload()), hashSeed: "ratio")]))
        }
        let scope = Scope(app: Fixtures.app, days: DayRange(from: "2019-10-01", to: "2019-10-31"))

        // Imbalance per device-day: one device-day here, so the imbalance itself, per handler.
        let perDeviceDay = try await database.analyze {
            try await $0.evaluate(.ratio(.handlerImbalance, .deviceDays), scope)
        }
        #expect(perDeviceDay.count == 2)
        #expect(perDeviceDay.first { $0.labels["handler"] == "Sync" }?.value == 3)
        #expect(perDeviceDay.first { $0.labels["handler"] == "Upload" }?.value == 0)
        #expect(perDeviceDay.allSatisfy { $0.samples == 1 })

        // Failures over attempts, by name: one unlabelled row.
        let rate = try await database.analyze {
            try await $0.evaluate(
                .ratio(
                    .signposts(category: "StateRestoration", name: "RestoreFailed"),
                    .signposts(category: "StateRestoration", name: "RestoreAttempt")), scope)
        }
        #expect(rate.count == 1)
        #expect(rate.first?.value == 7.0 / 3_000.0)
        #expect(rate.first?.samples == 3_000)
        #expect(rate.first?.labels.isEmpty == true)
    }

    @Test("counts stored before the decoder's bounds (a database edited by hand) saturate instead of trapping")
    func hugeStoredCountsSaturate() async throws {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        // Bypasses the decoder, as rows written before ValueBounds existed would.
        var huge = Fixtures.metric(version: "6.0.0", day: 21)
        huge.exits = [ExitCount(state: .foreground, reason: "NormalApp", count: Int64.max / 2 + 10)]
        huge.signposts = [SignpostMetric(category: "BG", name: "SyncEntered", totalCount: Int64.max - 1)]
        var second = huge
        second.meta.appBuildVersion = "413"
        try await IngestWriter.withWriter(database: database) { writer in
            _ = try await writer.submit(
                IngestRequest(
                    app: Fixtures.app,
                    items: [
                        Fixtures.item(.metric(huge), hashSeed: "huge-1"),
                        Fixtures.item(.metric(second), hashSeed: "huge-2"),
                    ]))
        }
        let scope = Scope(
            app: Fixtures.app, days: DayRange(from: "2019-10-01", to: "2019-10-31"), groupBy: [.version])
        let exits = try await database.analyze { try await $0.exits(scope) }
        let normal = try #require(exits.first { $0.reason == "NormalApp" && $0.state == .foreground })
        #expect(normal.count == Int64.max)
        #expect(exits.allSatisfy { $0.count >= 0 })
        let handler = try #require(
            try await database.analyze { try await $0.handlers(scope) }.first { $0.handler == "Sync" })
        #expect(handler.entered == Int64.max && handler.imbalance == Int64.max)
        // What the alert rule `exit_rate{state="foreground"}` evaluates: it used to trap here.
        for measure in [Measure.exits(state: .foreground, reason: nil), .exitRate(state: .foreground, reason: nil)] {
            let values = try await database.analyze { try await $0.evaluate(measure, scope) }
            #expect(!values.isEmpty)
            #expect(values.allSatisfy { ($0.value ?? -1).isFinite && ($0.value ?? -1) > 0 })
        }
    }
}
