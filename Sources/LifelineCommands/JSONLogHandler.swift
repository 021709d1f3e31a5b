import Foundation
import Logging

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts", "level", "label", "msg", …metadata}`; for log collectors.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(.iso8601),
            "level": event.level.rawValue,
            "label": label,
            "msg": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}
