import LifelineModel

/// How values are bounded before they are stored, shared by every store so the same document
/// yields the same rows on SQLite and PostgreSQL.
package enum StoredValue {
    /// A dimension value as stored: `nil` for a missing or empty value, else at most 1,024 UTF-8
    /// bytes (whole characters).
    package static func dimension(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value.utf8.count > 1_024 ? truncate(value, toUTF8: 1_024) : value
    }

    /// The crash group key of a diagnostic: fingerprint (≤ 128 bytes) and group kind (≤ 64 bytes).
    package static func crashGroup(_ diagnostic: Diagnostic) -> (fingerprint: String, kind: String) {
        let signature = diagnostic.signature
        let fingerprint = truncate(
            signature.fingerprint.isEmpty ? "\(diagnostic.kind.rawValue):unsigned" : signature.fingerprint, toUTF8: 128)
        let kind = truncate(
            signature.groupKind.isEmpty ? diagnostic.kind.rawValue : signature.groupKind, toUTF8: 64)
        return (fingerprint, kind)
    }

    /// Frames kept of a diagnostic's attributed chain.
    package static let maxFrames = 32

    /// `document` as the stores keep it: 2.0.0 histogram buckets in the legacy convention (a fleet
    /// sending both formats shares its buckets), dimension values (device, version, OS, exit
    /// reasons, signpost and metric names) bounded by ``dimension(_:)``.
    package static func normalized(_ document: DecodedDocument) -> DecodedDocument {
        var document = document
        switch document.content {
        case .metric(var metric):
            if metric.format == .v2 { metric = metric.withLegacyBucketBounds }
            metric.meta = bounded(metric.meta)
            for index in metric.exits.indices { metric.exits[index].reason = bounded(metric.exits[index].reason) }
            for index in metric.signposts.indices {
                metric.signposts[index].category = bounded(metric.signposts[index].category)
                metric.signposts[index].name = bounded(metric.signposts[index].name)
            }
            for index in metric.histograms.indices {
                metric.histograms[index].name = bounded(metric.histograms[index].name)
            }
            for index in metric.scalars.indices { metric.scalars[index].name = bounded(metric.scalars[index].name) }
            document.content = .metric(metric)
        case .diagnostic(var payload):
            for index in payload.diagnostics.indices {
                payload.diagnostics[index].meta = bounded(payload.diagnostics[index].meta)
            }
            document.content = .diagnostic(payload)
        }
        return document
    }

    private static func bounded(_ value: String) -> String {
        value.utf8.count > 1_024 ? truncate(value, toUTF8: 1_024) : value
    }

    private static func bounded(_ meta: DeviceMeta) -> DeviceMeta {
        var meta = meta
        meta.appVersion = dimension(meta.appVersion)
        meta.appBuildVersion = dimension(meta.appBuildVersion)
        meta.osVersion = dimension(meta.osVersion)
        meta.deviceType = dimension(meta.deviceType)
        meta.regionFormat = dimension(meta.regionFormat)
        meta.platformArchitecture = dimension(meta.platformArchitecture)
        return meta
    }

    /// `value` cut to at most `limit` UTF-8 bytes, at a character boundary.
    package static func truncate(_ value: String, toUTF8 limit: Int) -> String {
        var result = ""
        var used = 0
        for character in value {
            let size = character.utf8.count
            if used + size > limit { break }
            result.append(character)
            used += size
        }
        return result
    }
}

extension Measurement {
    /// The value if it is finite (neither store keeps NaN or infinities).
    package var finiteValue: Double? { value.flatMap { $0.isFinite ? $0 : nil } }
}
