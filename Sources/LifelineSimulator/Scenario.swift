/// What goes wrong in a simulated fleet. Every scenario acts on one app version (by default the
/// newest of `--versions`); all others behave like the baseline.
package enum Scenario: String, Sendable, CaseIterable, Equatable {
    /// A healthy fleet: balanced expiration handlers, ~0.05 % restoration failures, rare watchdog
    /// terminations (~0.04 % of device-days), a small stable set of crash groups.
    case baseline
    /// The version's `BackgroundSyncExpirationHandler` enters without exiting about a third of the time.
    case expirationHang = "expiration-hang"
    /// The version's restoration failure rate jumps from ~0.05 % to ~1.2 % of attempts.
    case restorationRegression = "restoration-regression"
    /// Watchdog (0x8BADF00D) terminations of the version rise to ~1.2 % of device-days.
    case watchdogSpike = "watchdog-spike"
    /// A new crash group (EXC_BAD_ACCESS / SIGSEGV in `ImageCache.decode`) appears in the version.
    case crashSpike = "crash-spike"
    /// Performance figures of the version (``SimulationConfig/regressionMetrics``, default all of
    /// ``PerfMetric``) are worse by ``SimulationConfig/regressionFactor`` (default × 1.3).
    case perfRegression = "perf-regression"

    /// Which figures change and which example alert rules must fire (for `--help` and the README).
    package var explanation: String {
        switch self {
        case .baseline:
            "nothing stands out; no example alert rule should fire."
        case .expirationHang:
            "for version X, signpost BackgroundSyncExpirationHandlerEntered > ...Exited (about 1/3 of entries "
                + "never exit) and background BackgroundTaskAssertionTimeout exits rise by the same amount. "
                + "Fires: \"expiration-handler imbalance for version X\", \"background task assertion timeouts\"."
        case .restorationRegression:
            "for version X, StateRestoration/RestoreFailed ÷ RestoreAttempt rises to ~1.2 % (others ~0.05 %). "
                + "Fires: \"restoration error rate > 0.1 %\" (scoped to version X)."
        case .watchdogSpike:
            "for version X, foreground AppWatchdog exits and 0x8BADF00D crash diagnostics (watchdog group, "
                + "AppDelegate.migrateDatabase blocked on a semaphore) reach ~1.2 % of device-days. "
                + "Fires: \"watchdog terminations > 0.1 % of device-days\"."
        case .crashSpike:
            "for version X only, foreground BadAccess exits rise and a crash group absent from older versions "
                + "appears (EXC_BAD_ACCESS / SIGSEGV at <app> +0x7d3a8, ~3 % of device-days). "
                + "Fires: \"new crash group\"."
        case .perfRegression:
            "for version X, every value of the --regression-metrics (default all: "
                + PerfMetric.allCases.map(\.rawValue).joined(separator: ", ")
                + ") is multiplied by --regression-factor (default 1.3, +30 %), in both formats; older versions "
                + "and the other metrics stay as in baseline. Insights (version X against the mean of the versions "
                + "before it) list each as a regression at p50 and p90. Fires (with launch regressed): "
                + "\"p95 time to first draw > 800 ms\"."
        }
    }
}
