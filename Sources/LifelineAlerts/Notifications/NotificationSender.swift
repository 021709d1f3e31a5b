/// Posts a notification body to a receiver's endpoint. ``HTTPNotificationSender`` is the real one.
package protocol NotificationSender: Sendable {
    /// Posts `body` (JSON) to `url`; throws when the endpoint did not answer 2xx.
    func post(url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws(NotificationError)
}
