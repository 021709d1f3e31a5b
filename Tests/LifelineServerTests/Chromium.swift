import Foundation
import LifelineTestFixtures
import LifelineTestSupport
import Testing

/// Headless Chromium (Debian's `chromium` package) rendering a page to PNG, with the page's
/// console output collected: the report and dashboard pages have no script, so any console
/// message (an error, a blocked resource) counts as an error.
enum Chromium {
    struct Result {
        var consoleErrors: [String]
    }

    /// The browser, if installed.
    static var executable: URL? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].map(URL.init(fileURLWithPath:))
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Whether the render tests run: chromium is installed, or `CI=true` (where its absence is a failure).
    static var isAvailableOrRequired: Bool {
        executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Renders the HTML file `page` to a PNG beside it and checks it: no console output, a real
    /// image (not a blank page). With `LIFELINE_KEEP_SCREENSHOTS=DIR` the PNG is copied there.
    /// The browser runs for seconds: it is waited for on a thread of its own (``offPool(_:)``),
    /// never on Swift's cooperative pool (two threads here), where it stalled every server of the suite.
    static func expectRenders(_ page: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let chromium = try #require(
            executable, "chromium is required in CI (apt-get install chromium)", sourceLocation: sourceLocation)
        let png = page.deletingPathExtension().appendingPathExtension("png")
        let result = try await offPool { try screenshot(chromium, url: page.absoluteString, to: png) }
        #expect(result.consoleErrors.isEmpty, "\(result.consoleErrors)", sourceLocation: sourceLocation)
        let size = try FileManager.default.attributesOfItem(atPath: png.path)[.size] as? Int ?? 0
        #expect(size > 20_000, "screenshot is \(size) bytes", sourceLocation: sourceLocation)
        if let keep = ProcessInfo.processInfo.environment["LIFELINE_KEEP_SCREENSHOTS"] {
            let copy = URL(fileURLWithPath: keep).appendingPathComponent(png.lastPathComponent)
            try? FileManager.default.removeItem(at: copy)
            try? FileManager.default.copyItem(at: png, to: copy)
        }
    }

    /// Renders `url` (file:// or http://127.0.0.1) to `png`, 1200 px wide, and returns the console lines.
    static func screenshot(_ chromium: URL, url: String, to png: URL, height: Int = 3000) throws -> Result {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = Process()
        process.executableURL = chromium
        process.arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(profile.path)", "--enable-logging=stderr", "--v=0",
            "--window-size=1200,\(height)", "--screenshot=\(png.path)", url,
        ]
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, FileManager.default.fileExists(atPath: png.path) else {
            throw TestFailure("chromium exited \(process.terminationStatus) without a screenshot:\n\(stderr)")
        }
        return Result(consoleErrors: stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init))
    }
}
