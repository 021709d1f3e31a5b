import LifelineModel

/// The evaluator's notion of time, injected so tests and `lifeline rules test` drive it.
package protocol AlertClock: Sendable {
    /// Epoch seconds now.
    func now() -> Int64
    /// Waits `duration`; throws when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock.
package struct SystemAlertClock: AlertClock {
    package init() {}

    package func now() -> Int64 { WallClock.nowSeconds() }

    package func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
