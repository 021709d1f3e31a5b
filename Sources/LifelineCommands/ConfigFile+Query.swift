import LifelineAnalysis
import LifelineServer

extension ConfigFile {
    /// `query:` — the bounds of every read (README, "Bounded reads"): rows per API answer, rows a
    /// read may materialise, its time budget, and reads at once. Unknown keys are refused.
    struct Query: Decodable {
        var maxRows: Int?
        var maxSourceRows: Int?
        var timeoutSeconds: Double?
        var maxConcurrent: Int?
        var queueWaitSeconds: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case maxRows = "max_rows"
            case maxSourceRows = "max_source_rows"
            case timeoutSeconds = "timeout_seconds"
            case maxConcurrent = "max_concurrent"
            case queueWaitSeconds = "queue_wait_seconds"
        }

        private struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let known = Set(CodingKeys.allCases.map(\.rawValue))
            for key in try decoder.container(keyedBy: AnyKey.self).allKeys where !known.contains(key.stringValue) {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [key],
                        debugDescription:
                            "query.\(key.stringValue) is not a known key; known: \(known.sorted().joined(separator: ", "))"
                    ))
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            maxRows = try c.decodeIfPresent(Int.self, forKey: .maxRows)
            maxSourceRows = try c.decodeIfPresent(Int.self, forKey: .maxSourceRows)
            timeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .timeoutSeconds)
            maxConcurrent = try c.decodeIfPresent(Int.self, forKey: .maxConcurrent)
            queueWaitSeconds = try c.decodeIfPresent(Double.self, forKey: .queueWaitSeconds)
        }

        /// Every problem of the section's values, named by key.
        var validationErrors: [String] {
            var errors: [String] = []
            for (name, value, range) in [
                ("query.max_rows", maxRows, 1...1_000_000),
                ("query.max_source_rows", maxSourceRows, 1...100_000_000),
                ("query.max_concurrent", maxConcurrent, 1...1_024),
            ] {
                if let value, !range.contains(value) {
                    errors.append("\(name) must be \(range.lowerBound)…\(range.upperBound), got \(value)")
                }
            }
            if let seconds = timeoutSeconds, !(seconds >= 0.001 && seconds <= 3_600) {
                errors.append("query.timeout_seconds must be 0.001…3600, got \(seconds)")
            }
            if let seconds = queueWaitSeconds, !(seconds >= 0 && seconds <= 60) {
                errors.append("query.queue_wait_seconds must be 0…60, got \(seconds)")
            }
            return errors
        }

        /// Sets the section's values on `config`.
        func apply(to config: inout ServerConfig) {
            if let rows = maxRows { config.maxRows = rows }
            if let rows = maxSourceRows { config.reads.maxSourceRows = rows }
            if let seconds = timeoutSeconds { config.reads.timeout = .milliseconds(Int64((seconds * 1_000).rounded())) }
            if let reads = maxConcurrent { config.reads.maxConcurrent = reads }
            if let seconds = queueWaitSeconds {
                config.reads.queueWait = .milliseconds(Int64((seconds * 1_000).rounded()))
            }
        }
    }
}
