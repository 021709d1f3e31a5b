import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAnalysis
import LifelineServer
import LifelineStore
import Logging
import NIOCore
import Synchronization

/// A fresh, migrated database file in its own temporary directory.
struct AlertTestEnvironment {
    let directory: URL
    let databasePath: String
    let database: Database

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-alerts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        databasePath = directory.appendingPathComponent("lifeline.sqlite").path
        database = try Database(path: databasePath, options: .init(synchronous: .normal))
        try database.migrate()
    }

    /// Writes `text` to `name` in the directory and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// Ingests JSON documents through the same pipeline and writer as the HTTP API.
    func ingest(_ documents: [String], app: String = Payloads.app) async throws {
        let pipeline = IngestPipeline()
        try await IngestWriter.withWriter(database: database, logger: .quiet) { writer in
            for document in documents {
                let items = try pipeline.prepare(
                    body: ByteBuffer(string: document), encoding: .identity, family: nil, app: app,
                    receivedAt: 1_000)
                _ = try await writer.submit(IngestRequest(app: app, items: items, idempotencyKey: nil))
            }
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Synthetic MetricKit documents.
enum Payloads {
    static let app = "com.example.notes"

    /// A metric payload of `day` (`YYYY-MM-DD`) with state-restoration signposts.
    static func metric(
        day: String, version: String = "4.2.0", attempts: Int = 100, failures: Int = 5, device: String = "iPhone15,2"
    ) -> String {
        """
        {
          "appVersion": "\(version)",
          "timeStampBegin": "\(day) 00:00:00 +0000",
          "timeStampEnd": "\(day) 23:59:00 +0000",
          "metaData": {
            "appBuildVersion": "1", "osVersion": "iPhone OS 17.4 (21E219)", "regionFormat": "US",
            "deviceType": "\(device)", "platformArchitecture": "arm64e", "bundleIdentifier": "\(app)"
          },
          "applicationExitMetrics": {
            "backgroundExitData": { "cumulativeBackgroundTaskAssertionTimeoutExitCount": 2 },
            "foregroundExitData": { }
          },
          "signpostMetrics": [
            { "signpostCategory": "StateRestoration", "signpostName": "RestoreAttempt", "totalSignpostCount": \(attempts) },
            { "signpostCategory": "StateRestoration", "signpostName": "RestoreFailed", "totalSignpostCount": \(failures) }
          ]
        }
        """
    }

    /// Epoch seconds of `hour`:00 UTC on `day`.
    static func time(_ day: String, hour: Int64 = 0, minute: Int64 = 0) -> Int64 {
        Int64(Day.ordinal(day)!) * 86_400 + hour * 3600 + minute * 60
    }
}

/// A clock the test moves by hand.
final class ManualClock: AlertClock {
    private let time: Mutex<Int64>

    init(_ start: Int64) {
        time = Mutex(start)
    }

    func now() -> Int64 { time.withLock { $0 } }

    func set(_ value: Int64) { time.withLock { $0 = value } }

    func advance(seconds: Int64) { time.withLock { $0 += seconds } }

    func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// What a test receiver got: one entry per request.
final class ReceivedRequests: Sendable {
    struct Entry: Sendable {
        var path: String
        var body: Data
    }

    private let entries = Mutex<[Entry]>([])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var all: [Entry] { entries.withLock { $0 } }

    func bodies(path: String) -> [Data] { all.filter { $0.path == path }.map(\.body) }
}

/// A Hummingbird app on 127.0.0.1 recording every POST (a webhook and an Alertmanager).
enum RecordingReceiver {
    static func application(_ received: ReceivedRequests) -> some ApplicationProtocol {
        let router = Router()
        router.post("**") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            received.append(.init(path: request.uri.path, body: Data(buffer: body)))
            return .ok
        }
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: .quiet)
    }
}

extension Logger {
    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
}
