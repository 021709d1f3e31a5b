import LifelineModel

/// How long each kind of stored data is kept: the `retention:` section of the config file.
/// A value of 0 keeps that kind forever.
///
/// Days are UTC days counted from today: `data_days: 180` keeps today and the 179 days before it,
/// by each payload's own day (the day its data describes, as every query counts it).
package struct RetentionPolicy: Sendable, Equatable, Decodable {
    /// Raw documents (the gzip copy as received), by payload day.
    package var rawDays: Int = 30
    /// Payloads with their normalized rows and diagnostics, the rollups of those days, and the
    /// crash groups left without a diagnostic.
    package var dataDays: Int = 180
    /// `Idempotency-Key` records, by the time they were written.
    package var idempotencyDays: Int = 7
    /// Alert state changes (`alert_history`), by the time of the change.
    package var alertHistoryDays: Int = 90

    /// The largest value accepted for any of the day counts (about 100 years).
    package static let maxDays = 36_600

    /// Keeps everything (what the tests and tools that load historical fixtures use).
    package static let keepForever = RetentionPolicy(rawDays: 0, dataDays: 0, idempotencyDays: 0, alertHistoryDays: 0)

    package init(rawDays: Int = 30, dataDays: Int = 180, idempotencyDays: Int = 7, alertHistoryDays: Int = 90) {
        self.rawDays = rawDays
        self.dataDays = dataDays
        self.idempotencyDays = idempotencyDays
        self.alertHistoryDays = alertHistoryDays
    }

    enum CodingKeys: String, CodingKey {
        case rawDays = "raw_days"
        case dataDays = "data_days"
        case idempotencyDays = "idempotency_days"
        case alertHistoryDays = "alert_history_days"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RetentionPolicy()
        rawDays = try c.decodeIfPresent(Int.self, forKey: .rawDays) ?? defaults.rawDays
        dataDays = try c.decodeIfPresent(Int.self, forKey: .dataDays) ?? defaults.dataDays
        idempotencyDays = try c.decodeIfPresent(Int.self, forKey: .idempotencyDays) ?? defaults.idempotencyDays
        alertHistoryDays = try c.decodeIfPresent(Int.self, forKey: .alertHistoryDays) ?? defaults.alertHistoryDays
    }

    /// The settings out of range, named as in the config file (empty when valid).
    package var validationErrors: [String] {
        [
            ("raw_days", rawDays), ("data_days", dataDays), ("idempotency_days", idempotencyDays),
            ("alert_history_days", alertHistoryDays),
        ].compactMap { name, value in
            (0...Self.maxDays).contains(value)
                ? nil : "retention.\(name) must be 0 (keep forever) to \(Self.maxDays), got \(value)"
        }
    }

    /// The first day kept of data kept `days` days, as of `now` (epoch seconds); nil when kept forever.
    package static func firstKeptDay(_ days: Int, now: Int64) -> Int? {
        guard days > 0 else { return nil }
        return UTCDay(epochSeconds: now).ordinal - days + 1
    }

    /// The oldest time kept of records kept `days` days, as of `now`; nil when kept forever.
    package static func firstKeptSecond(_ days: Int, now: Int64) -> Int64? {
        guard days > 0 else { return nil }
        return now - Int64(days) * 86_400
    }
}
