import Foundation

/// A unique directory under the system's temporary directory, removed when the last reference
/// goes (or by ``remove()``). Store tests that need a fresh, unmigrated file use its
/// ``databasePath``.
package final class TemporaryDirectory: Sendable {
    package let url: URL

    package init(prefix: String = "lifeline-tests") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { remove() }

    /// `lifeline.sqlite` in this directory (not created by this call).
    package var databasePath: String { url.appendingPathComponent("lifeline.sqlite").path }

    /// Writes `text` to `name` in the directory and returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
