import LifelineModel
import Testing

@Suite("Every shared fixture decodes")
struct EveryFixtureDecodes {
    @Test("the fixture directory holds the eight known files")
    func fixtureDirectoryIsFound() throws {
        let files = try Fixtures.allJSONFiles()
        #expect(files.count >= 8)
        #expect(files.contains("metrics/lifeline-authored__ios17-full.json"))
        #expect(files.contains("callstacktrees/getsentry_sentry-cocoa__tree-real.json"))
    }

    @Test("each fixture file decodes without error", arguments: try Fixtures.allJSONFiles())
    func fixtureDecodes(_ file: String) throws {
        if file.hasPrefix("callstacktrees/") {
            let tree = try MetricKitDecoder.decodeCallStackTree(try Fixtures.bytes(file))
            #expect(!tree.callStacks.isEmpty)
        } else {
            let bytes = try Fixtures.bytes(file)
            let documents = try MetricKitDecoder.decode(bytes, family: nil)
            #expect(documents.count == 1)
            #expect(documents.allSatisfy { $0.unparsedMeasurements == 0 })
            // No real value is out of ValueBounds.
            #expect(documents.allSatisfy { $0.droppedValues == 0 })
            let family: DocumentFamily =
                file.hasPrefix("metrics/") || file.contains("__metric-") ? .metric : .diagnostic
            #expect(try MetricKitDecoder.decode(bytes, family: family) == documents)
        }
    }
}
