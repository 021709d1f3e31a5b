import Foundation
import LifelineTestFixtures
import Testing

/// The generated Swift files (`Embedded*.swift`) are exactly what their scripts make from the
/// committed sources: each script runs on a scratch copy of its inputs and the bytes are compared.
@Suite("Generated files are fresh")
struct GeneratedFilesAreFresh {
    struct Generated: CustomStringConvertible, Sendable {
        var script: String
        var inputs: [String]
        var output: String
        var description: String { output }
    }

    static let files = [
        Generated(
            script: "scripts/embed-migrations.sh", inputs: ["migrations"],
            output: "Sources/LifelineSQLite/Migrations/EmbeddedMigrations.swift"),
        Generated(
            script: "scripts/embed-migrations.sh", inputs: ["migrations"],
            output: "Sources/LifelinePostgres/EmbeddedPostgresMigrations.swift"),
        Generated(
            script: "scripts/embed-openapi.sh", inputs: ["openapi.yaml"],
            output: "Sources/LifelineServer/Generated/EmbeddedOpenAPI.swift"),
    ]

    @Test("the committed file equals the script's output", arguments: files)
    func fresh(_ file: Generated) async throws {
        let scratch = TemporaryDirectory(prefix: "lifeline-generated")
        let manager = FileManager.default
        for input in file.inputs {
            try manager.copyItem(
                at: Paths.repository.appendingPathComponent(input), to: scratch.url.appendingPathComponent(input))
        }
        let outputDirectory = scratch.url.appendingPathComponent(file.output).deletingLastPathComponent()
        try manager.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Paths.repository.appendingPathComponent(file.script).path, scratch.url.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Waited for on a thread of its own, not on the pool every test shares.
        let status = await offPool {
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0, "\(file.script) failed")
        let made = try Data(contentsOf: scratch.url.appendingPathComponent(file.output))
        let committed = try Data(contentsOf: Paths.repository.appendingPathComponent(file.output))
        #expect(made == committed, "\(file.output) is stale: run bash \(file.script)")
    }
}
