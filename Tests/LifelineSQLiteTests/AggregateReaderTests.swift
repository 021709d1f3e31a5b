import LifelineAnalysis
import LifelineModel
import LifelineSQLite
import LifelineStoreTestSupport
import LifelineTestFixtures
import Testing

@Suite("Aggregate reader")
struct AggregateReaderTests {
    static let days = DayRange(from: "2019-10-21", to: "2019-10-22")

    private func database() async throws -> (TemporaryDirectory, Database) {
        let temp = TemporaryDirectory()
        let database = try temp.openDatabase()
        try await RollupFixtures.ingestMix(into: database)
        return (temp, database)
    }

    @Test("apps and hasApp describe the stored apps")
    func appsAreListed() async throws {
        let (temp, database) = try await database()
        _ = temp
        #expect(
            try await database.reads.apps() == [
                AppInfo(
                    bundleID: Fixtures.app, metricPayloads: 3, diagnosticPayloads: 1, firstDay: "2019-10-21",
                    lastDay: "2019-10-22")
            ])
        #expect(try await database.reads.hasApp(Fixtures.app))
        #expect(try await !database.reads.hasApp("com.example.nothing"))
    }

    @Test("usage is summed per group, with filters on string values")
    func usageGroupsAndFilters() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days)
        #expect(
            try await database.reads.usage(scope) == [
                UsageRow(key: .all, payloads: 3, foregroundMilliseconds: 210_000, backgroundMilliseconds: 107_000)
            ])
        #expect(
            try await database.reads.usage(scope.grouped(by: [.version])) == [
                UsageRow(
                    key: GroupKey(version: "4.1.0"), payloads: 2, foregroundMilliseconds: 110_000,
                    backgroundMilliseconds: 100_000),
                UsageRow(
                    key: GroupKey(version: "4.2.0"), payloads: 1, foregroundMilliseconds: 100_000,
                    backgroundMilliseconds: 7_000),
            ])
        var byOS = scope.grouped(by: [.os, .day])
        byOS.versions = ["4.1.0"]
        #expect(
            try await database.reads.usage(byOS).map { [$0.key.os, $0.key.day, String($0.payloads)] } == [
                ["iPhone OS 17.4 (21E219)", "2019-10-21", "1"], ["iPhone OS 18.0 (22A1)", "2019-10-22", "1"],
            ])
        var device = scope
        device.devices = ["iPhone16,1"]
        #expect(try await database.reads.usage(device).map(\.payloads) == [1])
        var unknownValue = scope
        unknownValue.versions = ["0.0.0"]
        #expect(try await database.reads.usage(unknownValue).isEmpty)
        #expect(try await database.reads.usage(Scope(app: "com.example.nothing", days: Self.days)).isEmpty)
        #expect(
            try await database.reads.usage(
                Scope(app: Fixtures.app, days: DayRange(from: "2019-10-23", to: "2019-10-30"))
            ).isEmpty)
        // A window is made of parsed days: text that is not a day never reaches the store.
        let notADay = "yesterday"
        #expect(UTCDay(notADay) == nil)
    }

    @Test("exits are summed per group, state and reason")
    func exitsGroupAndFilter() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days, groupBy: [.version])
        let rows = try await database.reads.exits(scope).filter { $0.reason == "MemoryPressure" }
        #expect(
            rows == [
                ExitRow(key: GroupKey(version: "4.1.0"), state: .background, reason: "MemoryPressure", count: 26),
                ExitRow(key: GroupKey(version: "4.2.0"), state: .background, reason: "MemoryPressure", count: 13),
            ])
        var byDevice = Scope(app: Fixtures.app, days: Self.days, groupBy: [.device])
        byDevice.oses = ["iPhone OS 17.4 (21E219)"]
        #expect(
            try await database.reads.exits(byDevice).filter { $0.reason == "NormalApp" } == [
                ExitRow(key: GroupKey(device: "iPhone15,2"), state: .foreground, reason: "NormalApp", count: 5),
                ExitRow(key: GroupKey(device: "iPhone16,1"), state: .foreground, reason: "NormalApp", count: 5),
            ])
        let oneDay = Scope(app: Fixtures.app, days: DayRange(from: "2019-10-22", to: "2019-10-22"))
        #expect(
            try await database.reads.exits(oneDay).first { $0.reason == "BackgroundTaskAssertionTimeout" }?.count == 6)
    }

    @Test("signposts are filtered by category; zero totals are rows")
    func signpostsByCategory() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days)
        #expect(
            try await database.reads.signposts(scope, categories: ["StateRestoration"]) == [
                SignpostRow(key: .all, category: "StateRestoration", name: "RestoreAttempt", count: 120)
            ])
        #expect(try await database.reads.signposts(scope, categories: []).count == 2)
        #expect(try await database.reads.signposts(scope, categories: ["Nope"]).isEmpty)
        let byDay = try await database.reads.signposts(scope.grouped(by: [.day]), categories: ["ExpirationHandlers"])
        #expect(byDay.map(\.count) == [7, 14])
        #expect(byDay.map(\.key.day) == ["2019-10-21", "2019-10-22"])
    }

    @Test("buckets are merged per group for metric and signpost sources")
    func bucketsPerSource() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days, groupBy: [.version])
        let launch = try await database.reads.buckets(
            scope, source: .metric("applicationLaunchMetrics.histogrammedTimeToFirstDrawKey"))
        #expect(
            launch == [
                BucketRow(key: GroupKey(version: "4.1.0"), start: 1_000, end: 1_010, count: 100),
                BucketRow(key: GroupKey(version: "4.1.0"), start: 1_010, end: 1_020, count: 120),
                BucketRow(key: GroupKey(version: "4.1.0"), start: 2_000, end: 2_000, count: 2),
                BucketRow(key: GroupKey(version: "4.2.0"), start: 1_000, end: 1_010, count: 50),
                BucketRow(key: GroupKey(version: "4.2.0"), start: 1_010, end: 1_020, count: 60),
                BucketRow(key: GroupKey(version: "4.2.0"), start: 2_000, end: 2_000, count: 1),
            ])
        var device = Scope(app: Fixtures.app, days: Self.days)
        device.devices = ["iPhone16,1"]
        #expect(
            try await database.reads.buckets(
                device, source: .signpost(category: "StateRestoration", name: "RestoreAttempt")) == [
                    BucketRow(key: .all, start: 0, end: 10, count: 30),
                    BucketRow(key: .all, start: 10, end: 20, count: 10),
                ])
        #expect(try await database.reads.buckets(scope, source: .metric("nothing.such")).isEmpty)
    }

    @Test("diagnostics count per kind and crash group, by their own metadata")
    func diagnosticsAndCrashGroups() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days, groupBy: [.version])
        let rows = try await database.reads.diagnostics(scope)
        #expect(rows.map(\.key.version) == ["4.1.0", "4.2.0", "4.2.0"])
        #expect(rows.map(\.kind) == [.crash, .crash, .hang])
        #expect(rows.map(\.count) == [1, 1, 1])
        #expect(rows[0].crashGroup == rows[1].crashGroup)
        // The hang has no OS or device: it is "unknown".
        let byOS = try await database.reads.diagnostics(Scope(app: Fixtures.app, days: Self.days, groupBy: [.os]))
        #expect(byOS.map(\.key.os) == ["unknown", "iPhone OS 17.4 (21E219)"])
        var unknownOS = Scope(app: Fixtures.app, days: Self.days)
        unknownOS.oses = ["unknown"]
        #expect(try await database.reads.diagnostics(unknownOS).map(\.kind) == [.hang])

        let infos = try await database.reads.crashGroups(app: Fixtures.app, ids: Array(Set(rows.map(\.crashGroup))))
        #expect(infos.count == 2)
        let crash = try #require(infos.first { $0.groupKind == "crash" })
        #expect(crash.fingerprint == "aaaaaaaaaaaaaaaa")
        #expect(crash.exceptionType == 1 && crash.signal == 11)
        #expect(crash.terminationReason == "Namespace SIGNAL, Code 11")
        #expect(
            crash.sampleFrames == [
                SampleFrame(binaryName: "MyApp", binaryUUID: "AAAA-1", address: 0xFFFF_0000_0000_1234, offset: 0x1234),
                SampleFrame(binaryName: "UIKitCore", binaryUUID: "BBBB-2", address: 7_000, offset: 700),
            ])
        #expect(try await database.reads.crashGroups(app: "com.example.other", ids: [crash.id]).isEmpty)
        #expect(try await database.reads.crashGroups(app: Fixtures.app, ids: []).isEmpty)
    }

    @Test("concurrent reads run beside the writer")
    func concurrentReads() async throws {
        let (temp, database) = try await database()
        _ = temp
        let scope = Scope(app: Fixtures.app, days: Self.days, groupBy: [.version])
        let expected = try await database.reads.exits(scope)
        let results = try await withThrowingTaskGroup(of: [ExitRow].self) { group in
            for _ in 0..<16 { group.addTask { try await database.reads.exits(scope) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 16 && results.allSatisfy { $0 == expected })
    }
}
