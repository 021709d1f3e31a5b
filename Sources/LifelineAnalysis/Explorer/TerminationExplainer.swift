import LifelineModel

/// Exits of one app version and reason (foreground and background together), as a store sums
/// them from its exit counters.
package struct ExitTally: Sendable, Equatable, Hashable {
    package var version: String
    /// The legacy reason name (`BadAccess`, `MemoryResourceLimit`…), as both decoders name it.
    package var reason: String
    package var count: Int64

    package init(version: String, reason: String, count: Int64) {
        self.version = version
        self.reason = reason
        self.count = count
    }
}

/// Diagnostics of one app version with the fields that decide which exit they explain, and how
/// many there were (a store counts them grouped by these fields).
package struct DiagnosticTally: Sendable, Equatable, Hashable {
    package var version: String
    package var kind: DiagnosticKind
    /// `exceptionType` (1 EXC_BAD_ACCESS, 2 EXC_BAD_INSTRUCTION, 6 EXC_BREAKPOINT, 10 EXC_CRASH…).
    package var exceptionType: Int64?
    /// `signal` (4 SIGILL, 5 SIGTRAP, 6 SIGABRT, 9 SIGKILL, 10 SIGBUS, 11 SIGSEGV…).
    package var signal: Int64?
    /// Whether `terminationReason` names the watchdog (`0x8badf00d`, any case).
    package var isWatchdog: Bool
    /// 2.0.0 `terminationCategory` (`badAccess`, `abnormal`, `illegalInstruction`, `watchdog`,
    /// `taskTimeout`, `fileLock`), when sent.
    package var terminationCategory: String?
    package var count: Int64

    package init(
        version: String, kind: DiagnosticKind, exceptionType: Int64? = nil, signal: Int64? = nil,
        isWatchdog: Bool = false, terminationCategory: String? = nil, count: Int64
    ) {
        self.version = version
        self.kind = kind
        self.exceptionType = exceptionType
        self.signal = signal
        self.isWatchdog = isWatchdog
        self.terminationCategory = terminationCategory
        self.count = count
    }

    /// The tally fields of one decoded diagnostic (count 1); `version` is its own metadata's app version.
    package init(_ diagnostic: Diagnostic) {
        self.init(
            version: diagnostic.meta.appVersion ?? "", kind: diagnostic.kind, exceptionType: diagnostic.exceptionType,
            signal: diagnostic.signal,
            isWatchdog: diagnostic.terminationReason.map(TerminationExplainer.namesWatchdog) ?? false,
            terminationCategory: diagnostic.terminationCategory, count: 1)
    }
}

/// Per version and reason: exits, those a diagnostic explains, and the rest.
package struct TerminationRow: Sendable, Equatable, Codable {
    package var version: String
    package var reason: String
    /// Exits the exit metrics report.
    package var exits: Int64
    /// Diagnostics that map to this reason.
    package var diagnostics: Int64
    /// `min(exits, diagnostics)`: exits a diagnostic explains.
    package var explained: Int64
    /// `exits − explained` (≥ 0): kills no diagnostic (and no in-process crash reporter) saw.
    package var unexplained: Int64
    /// `diagnostics − explained` (≥ 0): diagnostics without an exit counted yet (the metric payload
    /// of that day has not arrived, or the OS did not count it).
    package var unmatchedDiagnostics: Int64

    package init(
        version: String, reason: String, exits: Int64, diagnostics: Int64, explained: Int64, unexplained: Int64,
        unmatchedDiagnostics: Int64
    ) {
        self.version = version
        self.reason = reason
        self.exits = exits
        self.diagnostics = diagnostics
        self.explained = explained
        self.unexplained = unexplained
        self.unmatchedDiagnostics = unmatchedDiagnostics
    }

    enum CodingKeys: String, CodingKey {
        case version, reason, exits, diagnostics, explained, unexplained
        case unmatchedDiagnostics = "unmatched_diagnostics"
    }
}

/// Explained and unexplained terminations: exit counters against the diagnostics that explain them.
///
/// **Which diagnostic explains which exit reason** (DOMAIN.md §2–3, METRICKIT-27.md), first rule
/// that applies:
/// 1. a 2.0.0 memory exception (`memoryExceptionDiagnostic`) → `MemoryResourceLimit`;
/// 2. other kinds (hang, CPU and disk-write exceptions, launch) explain no exit: they are reports,
///    not terminations;
/// 3. a crash whose `terminationReason` names `0x8badf00d` → `AppWatchdog`;
/// 4. a crash with a 2.0.0 `terminationCategory` → that category's reason (`badAccess` →
///    `BadAccess`, `abnormal` → `Abnormal`, `illegalInstruction` → `IllegalInstruction`,
///    `watchdog` → `AppWatchdog`, `taskTimeout` → `BackgroundTaskAssertionTimeout`, `fileLock` →
///    `SuspendedWithLockedFile`): the OS states it;
/// 5. a crash by signal: SIGSEGV (11) or SIGBUS (10) → `BadAccess`; SIGILL (4) → `IllegalInstruction`;
///    SIGTRAP (5) → `IllegalInstruction` (inferred: Apple documents EXC_BREAKPOINT/SIGTRAP as the
///    ARM form of x86's EXC_BAD_INSTRUCTION/SIGILL, the Swift runtime's trap; no capture shows which
///    counter MetricKit increments); any other signal (SIGABRT 6, SIGKILL 9…) → `Abnormal`;
/// 6. a crash without a signal, by exception type: 1 EXC_BAD_ACCESS → `BadAccess`, 2
///    EXC_BAD_INSTRUCTION and 6 EXC_BREAKPOINT → `IllegalInstruction`, any other → `Abnormal`.
///
/// Diagnostics carry no foreground/background flag, so they are compared with the exits of both
/// states together. `explained = min(exits, diagnostics)`, `unexplained = exits − explained`,
/// `unmatched_diagnostics = diagnostics − explained`: none is ever negative, and a day whose
/// diagnostics outnumber its exits (a real iOS 27 capture has a SIGTRAP crash report on a day with no
/// crash exit counted) explains all its exits without inventing negative kills.
package enum TerminationExplainer {
    /// Whether a termination reason names the watchdog (`0x8badf00d`).
    package static func namesWatchdog(_ terminationReason: String) -> Bool {
        terminationReason.lowercased().contains("8badf00d")
    }

    /// The 2.0.0 `terminationCategory` values and their exit reasons.
    package static let categoryReasons: [String: String] = [
        "badAccess": "BadAccess", "abnormal": "Abnormal", "illegalInstruction": "IllegalInstruction",
        "watchdog": "AppWatchdog", "taskTimeout": "BackgroundTaskAssertionTimeout",
        "fileLock": "SuspendedWithLockedFile",
    ]

    /// The exit reason a diagnostic explains, `nil` when it explains none.
    package static func reason(of tally: DiagnosticTally) -> String? {
        switch tally.kind {
        case .memoryException: return "MemoryResourceLimit"
        case .hang, .cpuException, .diskWriteException, .appLaunch: return nil
        case .crash: break
        }
        if tally.isWatchdog { return "AppWatchdog" }
        if let category = tally.terminationCategory, let reason = categoryReasons[category] { return reason }
        if let signal = tally.signal {
            switch signal {
            case 10, 11: return "BadAccess"
            case 4, 5: return "IllegalInstruction"
            default: return "Abnormal"
            }
        }
        switch tally.exceptionType {
        case 1: return "BadAccess"
        case 2, 6: return "IllegalInstruction"
        default: return "Abnormal"
        }
    }

    /// One row per version and reason that has exits or diagnostics, sorted by version then reason.
    /// Negative counts are ignored; sums saturate.
    package static func explain(exits: [ExitTally], diagnostics: [DiagnosticTally]) -> [TerminationRow] {
        struct Key: Hashable, Comparable {
            var version: String
            var reason: String
            static func < (a: Key, b: Key) -> Bool { (a.version, a.reason) < (b.version, b.reason) }
        }
        var exitCounts: [Key: Int64] = [:]
        var diagnosticCounts: [Key: Int64] = [:]
        for tally in exits where tally.count > 0 {
            exitCounts[Key(version: tally.version, reason: tally.reason), default: 0].addSaturating(tally.count)
        }
        for tally in diagnostics where tally.count > 0 {
            guard let reason = reason(of: tally) else { continue }
            diagnosticCounts[Key(version: tally.version, reason: reason), default: 0].addSaturating(tally.count)
        }
        let keys = Set(exitCounts.keys).union(diagnosticCounts.keys).sorted()
        return keys.map { key in
            let exits = exitCounts[key] ?? 0
            let diagnostics = diagnosticCounts[key] ?? 0
            let explained = Swift.min(exits, diagnostics)
            return TerminationRow(
                version: key.version, reason: key.reason, exits: exits, diagnostics: diagnostics, explained: explained,
                unexplained: exits - explained, unmatchedDiagnostics: diagnostics - explained)
        }
    }
}
