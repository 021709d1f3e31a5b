import Foundation
import LifelineModel
import LifelineServer
import LifelineSimulator
import LifelineSQLite
import LifelineTestSupport
import Logging

/// A simulation configuration starting on a fixed day, so tests never depend on today's date.
func testConfig(
    devices: Int, days: Int, scenario: Scenario = .baseline, versions: [String] = ["4.1.0", "4.2.0"], seed: UInt64 = 7
) -> SimulationConfig {
    var config = SimulationConfig(
        bundleIdentifier: "com.example.notes", days: days, startDay: SimulationConfig.day(from: "2026-10-01"))
    config.devices = devices
    config.versions = versions
    config.scenario = scenario
    config.seed = seed
    return config
}

/// Every payload of a simulation, in send order.
func allPayloads(_ simulation: Simulation) -> [GeneratedPayload] {
    (0..<simulation.deviceDayCount).flatMap { simulation.deviceDay(at: $0).payloads }
}

/// Decodes one generated payload with the server's decoder, for the endpoint it is posted to.
func decode(_ payload: GeneratedPayload) throws -> DecodedDocument {
    let family: DocumentFamily = payload.kind == .metric ? .metric : .diagnostic
    let documents = try MetricKitDecoder.decode(payload.json, family: family)
    guard documents.count == 1 else { throw TestFailure("\(documents.count) documents in one payload") }
    return documents[0]
}
