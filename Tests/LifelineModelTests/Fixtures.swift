import Foundation
import LifelineModel
import LifelineTestFixtures

/// Access to the shared MetricKit fixtures (`../shared/fixtures/metrickit/` beside the repository).
enum Fixtures {
    /// `…/shared/fixtures/metrickit` (``Paths/fixtures``).
    static let directory: URL = Paths.fixtures

    /// The bytes of a fixture, e.g. `metrics/lifeline-authored__ios17-full.json`.
    static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    /// Every `.json` fixture, relative to ``directory``, sorted: the legacy format and the iOS 27
    /// `MetricReport`/`DiagnosticReport` captures of `ios27/` (`"version": "2.0.0"`).
    static func allJSONFiles() throws -> [String] {
        var files: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(folder).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue
            else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where file.hasSuffix(".json") {
                files.append(folder + "/" + file)
            }
        }
        return files.sorted()
    }

    /// Decodes a fixture as a body with auto-detected family.
    static func decode(_ relativePath: String, family: DocumentFamily? = nil) throws -> [DecodedDocument] {
        try MetricKitDecoder.decode(try bytes(relativePath), family: family)
    }

    /// The single metric payload of a fixture.
    static func metric(_ relativePath: String) throws -> MetricPayload {
        let documents = try decode(relativePath, family: .metric)
        guard documents.count == 1, case .metric(let payload) = documents[0].content else {
            throw FixtureError.unexpectedContent(relativePath)
        }
        return payload
    }

    /// The single diagnostic payload of a fixture.
    static func diagnostics(_ relativePath: String) throws -> DiagnosticPayload {
        let documents = try decode(relativePath, family: .diagnostic)
        guard documents.count == 1, case .diagnostic(let payload) = documents[0].content else {
            throw FixtureError.unexpectedContent(relativePath)
        }
        return payload
    }
}

/// A fixture did not hold what a test expected.
enum FixtureError: Error {
    case unexpectedContent(String)
}

/// Decodes an inline JSON text.
func decodeJSON(_ text: String, family: DocumentFamily? = nil, limits: DecodeLimits = .init()) throws(DecodeError)
    -> [DecodedDocument]
{
    try MetricKitDecoder.decode(Array(text.utf8), family: family, limits: limits)
}

/// The error an inline JSON text is refused with, or `nil` when it decodes.
func decodeError(_ text: String, family: DocumentFamily? = nil, limits: DecodeLimits = .init()) -> DecodeError? {
    refusal { () throws(DecodeError) in _ = try decodeJSON(text, family: family, limits: limits) }
}

/// The error `body` throws, or `nil` when it succeeds.
func refusal(_ body: () throws(DecodeError) -> Void) -> DecodeError? {
    switch Result(catching: body) {
    case .success: return nil
    case .failure(let error): return error
    }
}

extension MetricPayload {
    /// The scalar named `name`, if any.
    func scalar(_ name: String) -> ScalarMetric? { scalars.first { $0.name == name } }

    /// The histogram named `name`, if any.
    func histogram(_ name: String) -> Histogram? { histograms.first { $0.name == name }?.histogram }

    /// The exit count of a state and reason, if present.
    func exitCount(_ state: AppState, _ reason: String) -> Int64? {
        exits.first { $0.state == state && $0.reason == reason }?.count
    }
}
