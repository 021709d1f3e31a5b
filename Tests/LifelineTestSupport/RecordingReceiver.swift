import Foundation
import Hummingbird
import Synchronization

/// What a test receiver got: one entry per request.
package final class ReceivedRequests: Sendable {
    package struct Entry: Sendable {
        package var path: String
        package var body: Data
        /// What the receiver answered.
        package var status: HTTPResponse.Status = .ok
    }

    private let entries = Mutex<[Entry]>([])

    package init() {}

    package func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    package var all: [Entry] { entries.withLock { $0 } }

    package func bodies(path: String) -> [Data] { all.filter { $0.path == path }.map(\.body) }
}

/// A Hummingbird app on 127.0.0.1 recording every POST (a webhook and an Alertmanager).
package enum RecordingReceiver {
    /// - Parameter refuse: paths answered 503 while it says so (a receiver that is down).
    package static func application(
        _ received: ReceivedRequests, refuse: @escaping @Sendable (String) -> Bool = { _ in false }
    ) -> some ApplicationProtocol {
        let router = Router()
        router.post("**") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let status: HTTPResponse.Status = refuse(request.uri.path) ? .serviceUnavailable : .ok
            received.append(.init(path: request.uri.path, body: Data(buffer: body), status: status))
            return status
        }
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: .quiet)
    }
}
