import Foundation
import LifelineModel
import LifelineTestFixtures
import Testing

/// Formats it cannot read are refused, not guessed (issue 24): a report of an unknown major
/// version, or a 2.0.0 report whose day cannot be read, is a named 422-class error.
@Suite("Report versions and time ranges")
struct ReportVersionTests {
    /// A real iOS 27 capture, edited as JSON.
    static func edited(_ fixture: String, _ edit: (inout [String: Any]) -> Void) throws -> [UInt8] {
        var object = try #require(try JSONSerialization.jsonObject(with: Paths.fixture(fixture)) as? [String: Any])
        edit(&object)
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    static func code(_ bytes: [UInt8]) -> DecodeError.Code? {
        do {
            _ = try MetricKitDecoder.decode(bytes, family: nil)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("a report of major version 3 is refused as unsupported_version, naming the version; 2.9.9 reads as 2.x")
    func unknownMajorVersion() throws {
        for fixture in [ReportsV2Decode.dayReport, ReportsV2Decode.crash] {
            let three = try Self.edited(fixture) { $0["version"] = "3.0.0" }
            #expect(Self.code(three) == .unsupportedVersion)
            do {
                _ = try MetricKitDecoder.decode(three, family: nil)
            } catch {
                #expect(error.message.contains("3.0.0"))
            }
            let minor = try Self.edited(fixture) { $0["version"] = "2.9.9" }
            #expect(Self.code(minor) == nil, "a minor version of 2 only adds fields: read as 2.x")
        }
    }

    @Test("a 2.0.0 report without a readable timeRange.begin is refused as unreadable_time_range")
    func unreadableTimeRange() throws {
        for fixture in [ReportsV2Decode.dayReport, ReportsV2Decode.crash] {
            #expect(Self.code(try Self.edited(fixture) { $0["timeRange"] = nil }) == .unreadableTimeRange)
            #expect(
                Self.code(try Self.edited(fixture) { $0["timeRange"] = ["begin": "yesterday", "end": 810_964_800] })
                    == .unreadableTimeRange)
            #expect(Self.code(try Self.edited(fixture) { $0["timeRange"] = "2026-09-12" }) == .unreadableTimeRange)
            #expect(Self.code(try Self.edited(fixture) { _ in }) == nil, "the capture itself reads")
        }
    }
}
