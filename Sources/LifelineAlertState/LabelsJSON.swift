import Foundation

/// Labels and annotations as stored by every ``AlertStateStore``: a JSON object with sorted keys,
/// so the same label set is the same bytes on every backend.
package enum LabelsJSON {
    package static func encode(_ labels: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(labels)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The labels of `text`; empty when it is not a JSON object of strings.
    package static func decode(_ text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }
}
