import Foundation
import Testing

@testable import LifelineKit

@Suite("An upload cancelled as it ends", .serialized, .timeLimit(.minutes(2)))
struct TransportCancelTests {
    @Test("cancelling uploads at every moment of their transfer never hangs: each ends answered or cancelled")
    func cancelledAsTheyEnd() async throws {
        let server = try ScriptedServer(
            script: [], fallback: .init(status: 202, body: #"{"accepted":1,"duplicates":0,"ids":[1]}"#))
        defer { server.close() }
        let transport = Transport(baseURL: server.url, key: "k", timeout: .seconds(10), maxConnections: 4)
        let body = Data(repeating: 0x1F, count: 64)
        // Cancelled after 0 to ~2 ms: before the request leaves, while it is answered, and as its transfer
        // completes (where Foundation on Linux deadlocked a cancelled `data(for:)`: #5412).
        var answered = 0
        var cancelled = 0
        for round in 0..<400 {
            let upload = Task { try await transport.post(body, kind: .metric, id: "r\(round)") }
            try await Task.sleep(for: .microseconds((round * 37) % 2_000))
            upload.cancel()
            do {
                let answer = try await upload.value
                #expect(answer.status == 202)
                answered += 1
            } catch {
                cancelled += 1
            }
        }
        #expect(answered + cancelled == 400)
        #expect(answered > 0)
    }
}
