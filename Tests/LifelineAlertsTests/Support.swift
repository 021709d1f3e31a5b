import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineStore
import LifelineTestSupport
import Logging
import NIOCore
import Synchronization

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
        (UTCDay(day)?.startEpochSeconds ?? 0) + hour * 3600 + minute * 60
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
