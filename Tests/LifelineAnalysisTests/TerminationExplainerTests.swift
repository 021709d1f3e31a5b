import LifelineAnalysis
import LifelineModel
import Testing

@Suite("Explained and unexplained terminations")
struct TerminationExplainerTests {
    static func crash(
        _ exception: Int64?, _ signal: Int64?, watchdog: Bool = false, category: String? = nil, version: String = "1.0"
    ) -> DiagnosticTally {
        DiagnosticTally(
            version: version, kind: .crash, exceptionType: exception, signal: signal, isWatchdog: watchdog,
            terminationCategory: category, count: 1)
    }

    @Test("diagnostics map to exit reasons as documented")
    func mapping() {
        let reason = TerminationExplainer.reason(of:)
        #expect(reason(Self.crash(1, 11)) == "BadAccess")
        #expect(reason(Self.crash(1, 10)) == "BadAccess")
        #expect(reason(Self.crash(2, 4)) == "IllegalInstruction")
        #expect(reason(Self.crash(6, 5)) == "IllegalInstruction")
        #expect(reason(Self.crash(10, 6)) == "Abnormal")
        #expect(reason(Self.crash(10, 9, watchdog: true)) == "AppWatchdog")
        #expect(reason(Self.crash(6, 5, category: "abnormal")) == "Abnormal")  // the OS's category wins
        #expect(reason(Self.crash(nil, nil, category: "taskTimeout")) == "BackgroundTaskAssertionTimeout")
        #expect(reason(Self.crash(1, nil)) == "BadAccess")
        #expect(reason(Self.crash(nil, nil)) == "Abnormal")
        #expect(reason(DiagnosticTally(version: "1", kind: .memoryException, count: 1)) == "MemoryResourceLimit")
        for kind in [DiagnosticKind.hang, .cpuException, .diskWriteException, .appLaunch] {
            #expect(reason(DiagnosticTally(version: "1", kind: kind, count: 1)) == nil)
        }
        #expect(TerminationExplainer.namesWatchdog("Namespace SPRINGBOARD, Code 0x8badf00d"))
        #expect(TerminationExplainer.namesWatchdog("0x8BADF00D"))
        #expect(!TerminationExplainer.namesWatchdog("Namespace SIGNAL, Code 0xb"))
    }

    @Test("explained is min(exits, diagnostics); unexplained and unmatched are the remainders, never negative")
    func arithmetic() {
        let exits = [
            ExitTally(version: "1.0", reason: "BadAccess", count: 7),
            ExitTally(version: "1.0", reason: "BadAccess", count: 3),
            ExitTally(version: "1.0", reason: "MemoryResourceLimit", count: 2),
            ExitTally(version: "2.0", reason: "AppWatchdog", count: 4),
            ExitTally(version: "2.0", reason: "Abnormal", count: -5),
        ]
        let diagnostics =
            Array(repeating: Self.crash(1, 11), count: 4) + [
                DiagnosticTally(version: "1.0", kind: .memoryException, count: 5),
                Self.crash(10, 9, watchdog: true, version: "2.0"),
                DiagnosticTally(version: "2.0", kind: .hang, count: 9),
            ]
        let rows = TerminationExplainer.explain(exits: exits, diagnostics: diagnostics)
        #expect(
            rows == [
                TerminationRow(
                    version: "1.0", reason: "BadAccess", exits: 10, diagnostics: 4, explained: 4, unexplained: 6,
                    unmatchedDiagnostics: 0),
                TerminationRow(
                    version: "1.0", reason: "MemoryResourceLimit", exits: 2, diagnostics: 5, explained: 2,
                    unexplained: 0, unmatchedDiagnostics: 3),
                TerminationRow(
                    version: "2.0", reason: "AppWatchdog", exits: 4, diagnostics: 1, explained: 1, unexplained: 3,
                    unmatchedDiagnostics: 0),
            ])
        #expect(TerminationExplainer.explain(exits: [], diagnostics: []).isEmpty)
        // Saturating sums: no trap on absurd counts.
        let huge = TerminationExplainer.explain(
            exits: [
                ExitTally(version: "1", reason: "Abnormal", count: .max),
                ExitTally(version: "1", reason: "Abnormal", count: 9),
            ],
            diagnostics: [])
        #expect(huge.first?.exits == .max && huge.first?.unexplained == .max)
    }

    @Test("the real iOS 27 day: 8 memory-limit exits, 2 memory-exception reports; a SIGTRAP report with no crash exit")
    func realReportDay() throws {
        let day = try ExplorerFixtures.metric("ios27/HitchScope__metric-20260913T053136.822.json")
        let version = try #require(day.meta.appVersion)
        let extraction = ExplorerExtractor.extract(day)
        var exits: [ExitTally] = []
        for exit in extraction.exits where exit.appState == ExplorerExtractor.overallState {
            exits.append(ExitTally(version: version, reason: exit.reason, count: exit.count))
        }
        var diagnostics: [DiagnosticTally] = []
        for file in try ExplorerFixtures.files("ios27", containing: "diagnostic") {
            for case .diagnostic(let payload) in try ExplorerFixtures.documents(file) {
                diagnostics += payload.diagnostics.map(DiagnosticTally.init)
            }
        }
        #expect(diagnostics.count == 3)
        let rows = TerminationExplainer.explain(exits: exits, diagnostics: diagnostics)
        let memory = try #require(rows.first { $0.reason == "MemoryResourceLimit" })
        #expect(memory.exits == 8 && memory.explained == 2 && memory.unexplained == 6)
        let trap = try #require(rows.first { $0.reason == "IllegalInstruction" })
        #expect(trap.exits == 0 && trap.diagnostics == 1 && trap.unexplained == 0 && trap.unmatchedDiagnostics == 1)
        #expect(rows.allSatisfy { $0.unexplained >= 0 && $0.unmatchedDiagnostics >= 0 })
    }
}
