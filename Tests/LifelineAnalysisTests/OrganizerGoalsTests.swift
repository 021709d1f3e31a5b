import LifelineAnalysis
import Testing

@Suite("Organizer goal bands")
struct OrganizerGoalsTests {
    @Test("scroll hitch time ratio: < 5 good, 5–10 fair, > 10 poor (WWDC20 10077)")
    func scrollHitches() {
        let metric = "animationMetrics.scrollHitchTimeRatio"
        #expect(OrganizerGoals.goal(for: metric, value: 0) == .good)
        #expect(OrganizerGoals.goal(for: metric, value: 4.99) == .good)
        #expect(OrganizerGoals.goal(for: metric, value: 5) == .fair)
        #expect(OrganizerGoals.goal(for: metric, value: 10) == .fair)
        #expect(OrganizerGoals.goal(for: metric, value: 10.01) == .poor)
        #expect(OrganizerGoals.band(for: metric)?.unit == .millisecondsPerSecond)
    }

    @Test("Hitches metric: ≤ 10 good, ≤ 25 fair, above poor (Understanding hitches in your app)")
    func hitches() {
        for metric in ["animationMetrics.hitchTimeRatio", "animationMetrics.ratio"] {
            #expect(OrganizerGoals.goal(for: metric, value: 10) == .good)
            #expect(OrganizerGoals.goal(for: metric, value: 10.5) == .fair)
            #expect(OrganizerGoals.goal(for: metric, value: 25) == .fair)
            #expect(OrganizerGoals.goal(for: metric, value: 51) == .poor)
            #expect(OrganizerGoals.goal(for: metric, value: .nan) == nil)
        }
    }

    @Test("no goal where Apple publishes no band")
    func noInventedBands() {
        for metric in [
            "applicationLaunchMetrics.histogrammedTimeToFirstDrawKey",
            "applicationResponsivenessMetrics.histogrammedAppHangTime",
            "memoryMetrics.peakMemoryUsage", "diskIOMetrics.cumulativeLogicalWrites", "cpuMetrics.cumulativeCPUTime",
        ] {
            #expect(OrganizerGoals.band(for: metric) == nil, "\(metric)")
        }
        #expect(OrganizerGoals.bands.count == 3)
    }
}
