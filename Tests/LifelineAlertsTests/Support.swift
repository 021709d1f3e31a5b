import Foundation
import Hummingbird
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSQLite
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
