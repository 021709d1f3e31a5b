import CompressNIO
import Foundation
import Logging
import NIOCore

/// The repository's root and the shared fixtures beside it.
package enum Paths {
    package static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// `…/shared/fixtures/metrickit` beside the repository.
    package static let fixtures = repository.deletingLastPathComponent().appendingPathComponent(
        "shared/fixtures/metrickit", isDirectory: true)

    package static func fixture(_ relative: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(relative))
    }

    /// The `lifeline` executable built beside the test bundle.
    package static var executable: URL {
        get throws {
            let candidates = [
                URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
                URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                repository.appendingPathComponent(".build/debug"),
            ]
            for directory in candidates {
                let url = directory.appendingPathComponent("lifeline")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            throw TestFailure("lifeline executable not found near \(candidates.map(\.path))")
        }
    }
}

/// A test's own failure, with a message.
package struct TestFailure: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// `data` gzip-compressed (real zlib, through compress-nio).
package func gzip(_ data: Data) throws -> ByteBuffer {
    var buffer = ByteBuffer(bytes: data)
    return try buffer.compress(with: .gzip())
}

extension Logger {
    /// A logger that drops everything.
    package static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
}
