import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LifelineIngest
import LifelineModel
import LifelineServer
import LifelineSQLite
import LifelineTestSupport
import Logging
import NIOCore

/// Headers for an ingest request.
func ingestHeaders(_ token: String?, gzip: Bool = false, idempotencyKey: String? = nil) -> HTTPFields {
    var headers: HTTPFields = [.contentType: "application/json"]
    if let token { headers[.authorization] = "Bearer \(token)" }
    if gzip { headers[.contentEncoding] = "gzip" }
    if let idempotencyKey { headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey }
    return headers
}

/// The JSON object of a response body.
func json(_ body: ByteBuffer) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] else {
        throw TestFailure("body is not a JSON object: \(String(buffer: body))")
    }
    return object
}

/// The `error.code` of an error body.
func errorCode(_ body: ByteBuffer) -> String? {
    ((try? json(body))?["error"] as? [String: Any])?["code"] as? String
}

/// A metric payload in the reference shape, distinct per `index`.
func metricPayload(
    index: Int, bundle: String? = "com.example.app", version: String = "4.2.0", day: Int = 1,
    entered: Int = 5, exited: Int = 5
) -> Data {
    let bundleLine = bundle.map { "\"bundleIdentifier\": \"\($0)\"," } ?? ""
    let text = """
        {
          "appVersion": "\(version)",
          "timeStampBegin": "2026-10-\(String(format: "%02d", day)) 00:00:00 +0000",
          "timeStampEnd": "2026-10-\(String(format: "%02d", day)) 23:59:00 +0000",
          "metaData": {
            \(bundleLine)
            "appBuildVersion": "\(index)",
            "osVersion": "iPhone OS 17.4 (21E219)",
            "deviceType": "iPhone15,2",
            "regionFormat": "US",
            "platformArchitecture": "arm64e"
          },
          "applicationExitMetrics": {
            "foregroundExitData": {"cumulativeNormalAppExitCount": \(index % 7 + 1), "cumulativeAppWatchdogExitCount": 1},
            "backgroundExitData": {"cumulativeMemoryPressureExitCount": 3, "cumulativeBackgroundTaskAssertionTimeoutExitCount": 2}
          },
          "applicationLaunchMetrics": {
            "histogrammedTimeToFirstDrawKey": {"histogramNumBuckets": 2, "histogramValue": {
              "1": {"bucketCount": 5, "bucketStart": "400 ms", "bucketEnd": "800 ms"},
              "0": {"bucketCount": 14, "bucketStart": "300 ms", "bucketEnd": "400 ms"}}}
          },
          "memoryMetrics": {"peakMemoryUsage": "\(100_000 + index) kB"},
          "signpostMetrics": [
            {"signpostCategory": "ExpirationHandlers", "signpostName": "SyncExpirationHandlerEntered", "totalSignpostCount": \(entered)},
            {"signpostCategory": "ExpirationHandlers", "signpostName": "SyncExpirationHandlerExited", "totalSignpostCount": \(exited)}
          ]
        }
        """
    return Data(text.utf8)
}
