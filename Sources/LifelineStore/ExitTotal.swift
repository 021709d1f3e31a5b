import LifelineModel

/// The sum of one exit counter over payloads.
package struct ExitTotal: Sendable, Equatable {
    package var state: AppState
    /// e.g. `MemoryPressure`.
    package var reason: String
    package var count: Int64

    package init(state: AppState, reason: String, count: Int64) {
        self.state = state
        self.reason = reason
        self.count = count
    }
}
