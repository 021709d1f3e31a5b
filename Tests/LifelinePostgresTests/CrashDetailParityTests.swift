import Crypto
import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineSimulator
import LifelineSQLite
import LifelineStorage
import LifelineTestSupport
import Logging
import PostgresNIO
import Testing

/// Crash detail (issue 23): the sample of every crash group — exception, signal, termination
/// reason and category, pid, signpost data, the Objective-C message, frames — reads the same on
/// both stores, from the real fixtures of both formats and a crash with an exception reason.
@Suite("Crash detail parity")
struct CrashDetailParityTests {
    @Test("every crash group's sample reads the same on SQLite and PostgreSQL")
    func sameCrashDetail() async throws {
        var documents: [String] = []
        for name in [
            "diagnostics/ChimeHQ_Meter__real_report.json", "diagnostics/ChimeHQ_Meter__xcode_simulated_ios14.json",
            "diagnostics/embrace-io_embrace-apple-sdk__ios26-crash_diagnostic_01.json",
            "ios27/HitchScope__diagnostic-20260912T110745.770.json",
            "ios27/HitchScope__diagnostic-20260912T172435.024.json",
        ] {
            documents.append(String(decoding: try Paths.fixture(name), as: UTF8.self))
        }
        // An uncaught NSException: its composed message is part of the sample.
        documents.append(
            """
            {"timeStampBegin": "2026-10-02 00:00:00", "timeStampEnd": "2026-10-02 23:59:00",
             "crashDiagnostics": [{"version": "1.0.0",
               "diagnosticMetaData": {"appVersion": "4.2.0", "appBuildVersion": "7", "osVersion": "iPhone OS 17.4 (21E219)",
                 "deviceType": "iPhone15,2", "regionFormat": "US", "platformArchitecture": "arm64e",
                 "exceptionType": 10, "exceptionCode": 0, "signal": 6, "terminationReason": "Namespace SIGNAL, Code 6",
                 "objectiveCexceptionReason": {"composedMessage": "*** -[__NSArrayM objectAtIndex:]: index 3 beyond bounds",
                   "formatString": "*** -[%@ objectAtIndex:]: index %lu beyond bounds", "arguments": [],
                   "exceptionType": "NSRangeException", "className": "__NSArrayM", "exceptionName": "NSRangeException"}},
               "callStackTree": {"callStackPerThread": true, "callStacks": [{"threadAttributed": true,
                 "callStackRootFrames": [{"binaryUUID": "5A4E8A8E-0A4B-3B3A-9C3C-2E6E1D0C9F11", "offsetIntoBinaryTextSegment": 16432,
                   "sampleCount": 1, "binaryName": "Notes", "address": 4295000112}]}]}}]}
            """)
        // Each fixture under its own app (ingest refuses a document of another app).
        let apps = try documents.map { document in
            try MetricKitDecoder.decode(Array(document.utf8), family: .diagnostic).first?.bundleIdentifier
                ?? "com.example.notes"
        }
        var details: [Backend: [String]] = [:]
        for backend in Backend.allCases {
            guard let store = try await TestStore.make(backend) else { return }
            for (document, app) in zip(documents, apps) { try await store.ingest([document], app: app) }
            var rows: [String] = []
            for app in Set(apps).sorted() {
                let scope = Scope(app: app, days: DayRange(from: "2020-01-01", to: "2027-12-31"))
                rows += try await AnalysisRunner(source: store.source).analyze { analyzer in
                    try await analyzer.crashes(scope).map { crash in
                        var group = crash.group
                        group.id = 0
                        return "\(app) \(group)"
                    }.sorted()
                }
            }
            details[backend] = rows
            await store.remove()
        }
        let sqlite = try #require(details[.sqlite])
        #expect(sqlite.count >= 4)
        #expect(sqlite.contains { $0.contains("index 3 beyond bounds") }, "the exception message is in the sample")
        #expect(sqlite == details[.postgres])
    }
}
