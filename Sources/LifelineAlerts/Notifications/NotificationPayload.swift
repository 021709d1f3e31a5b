import Foundation
import LifelineModel
import LifelineAnalysis

/// The JSON bodies sent to receivers.
package enum NotificationPayload {
    /// The body for `receiver` carrying `notices`.
    package static func body(for receiver: ReceiverConfig, _ notices: [AlertNotice]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data?
        switch receiver.kind {
        case .alertmanager:
            data = try? encoder.encode(notices.map(AlertmanagerAlert.init))
        case .webhook:
            let status: AlertNotice.Status = notices.contains { $0.status == .firing } ? .firing : .resolved
            data = try? encoder.encode(
                Webhook(version: "1", receiver: receiver.name, status: status, alerts: notices.map(WebhookAlert.init)))
        }
        return data.map { Array($0) } ?? Array("[]".utf8)
    }

    /// One element of Alertmanager's `POST /api/v2/alerts` array.
    struct AlertmanagerAlert: Codable, Equatable {
        var labels: [String: String]
        var annotations: [String: String]
        var startsAt: String
        var endsAt: String?
        var generatorURL: String?

        init(_ notice: AlertNotice) {
            labels = notice.labels
            annotations = notice.annotations
            startsAt = UTCTimestamp.iso8601(notice.startsAt)
            endsAt = notice.endsAt.map(UTCTimestamp.iso8601)
            generatorURL = notice.generatorURL
        }
    }

    /// The generic webhook body.
    struct Webhook: Codable, Equatable {
        var version: String
        var receiver: String
        var status: AlertNotice.Status
        var alerts: [WebhookAlert]
    }

    /// One alert of the generic webhook body.
    struct WebhookAlert: Codable, Equatable {
        var status: AlertNotice.Status
        var rule: String
        var fingerprint: String
        var labels: [String: String]
        var annotations: [String: String]
        var startsAt: String
        var endsAt: String?
        var value: Double?
        var generatorURL: String?
        /// ``AlertNotice/dedupKey``: the same for every delivery of this change.
        var dedupKey: String

        init(_ notice: AlertNotice) {
            dedupKey = notice.dedupKey
            status = notice.status
            rule = notice.rule
            fingerprint = notice.fingerprint
            labels = notice.labels
            annotations = notice.annotations
            startsAt = UTCTimestamp.iso8601(notice.startsAt)
            endsAt = notice.endsAt.map(UTCTimestamp.iso8601)
            value = notice.value.flatMap { $0.isFinite ? $0 : nil }
            generatorURL = notice.generatorURL
        }
    }
}
