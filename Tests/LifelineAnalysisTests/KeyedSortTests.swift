import LifelineAnalysis
import Testing

@Suite("Figures sorted by their group keys")
struct KeyedSortTests {
    struct Row: Equatable {
        var key: GroupKey
        var reason: String
        var count: Int
    }

    @Test("sorting by ranked keys gives the order of comparing the keys themselves")
    func sameOrderAsKeyComparison() {
        let versions = ["4.10.0", "4.9.1", "4.2.0 (57)", "4.2.0 (9)", "unknown"]
        let days = ["2026-10-30", "2026-10-02", nil]
        let oses = ["iOS 17.2 (21C62)", "iOS 18.0 (22A3354)", nil]
        let reasons = ["MemoryLimit", "Abnormal", "Watchdog", "NormalAppExit"]
        var rows: [Row] = []
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        for count in 0..<2_000 {
            let key = GroupKey(
                version: versions[next(versions.count)], os: oses[next(oses.count)], day: days[next(days.count)])
            rows.append(Row(key: key, reason: reasons[next(reasons.count)], count: count))
        }
        let ranked = rows.sorted(byKey: \.key) { ($0.reason, $0.count) < ($1.reason, $1.count) }
        let direct = rows.sorted { a, b in
            a.key != b.key ? a.key < b.key : (a.reason, a.count) < (b.reason, b.count)
        }
        #expect(ranked == direct)
        #expect(ranked.first?.key.day == nil)
        #expect(ranked.last?.key == GroupKey(version: "4.10.0", os: "iOS 18.0 (22A3354)", day: "2026-10-30"))
    }
}
