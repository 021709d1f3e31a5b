/// One exit counter: `backgroundExitData.cumulativeMemoryPressureExitCount = 13` becomes
/// `ExitCount(state: .background, reason: "MemoryPressure", count: 13)`.
/// The reason is the JSON key without `cumulative` / `ExitCount`, so unknown future reasons pass through.
package struct ExitCount: Sendable, Equatable {
    package var state: AppState
    package var reason: String
    package var count: Int64

    package init(state: AppState, reason: String, count: Int64) {
        self.state = state
        self.reason = reason
        self.count = count
    }
}
