/// Size limits applied to every ingest body. Defaults are documented in the README.
package struct IngestLimits: Sendable, Equatable, Codable {
    /// Largest body accepted as sent on the wire (compressed or not). Default 4 MiB.
    package var maxBodyBytes: Int = 4 << 20
    /// Largest decompressed body. Default 32 MiB.
    package var maxDecompressedBytes: Int = 32 << 20
    /// Largest decompressed/compressed ratio once the output passes ``ratioFloorBytes``. Default 100.
    package var maxCompressionRatio: Int = 100
    /// Output size below which the ratio is not checked (small bodies compress well). Default 1 MiB.
    package var ratioFloorBytes: Int = 1 << 20
    /// Longest `Idempotency-Key` header. Default 255, at most ``storedIdempotencyKeyBytes``.
    package var maxIdempotencyKeyBytes: Int = 255

    /// The longest idempotency key (and app bundle id) either store keeps.
    package static let storedIdempotencyKeyBytes = 255

    package init() {}

    enum CodingKeys: String, CodingKey {
        case maxBodyBytes = "max_body_bytes"
        case maxDecompressedBytes = "max_decompressed_bytes"
        case maxCompressionRatio = "max_compression_ratio"
        case ratioFloorBytes = "ratio_floor_bytes"
        case maxIdempotencyKeyBytes = "max_idempotency_key_bytes"
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = IngestLimits()
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? d.maxBodyBytes
        maxDecompressedBytes =
            try c.decodeIfPresent(Int.self, forKey: .maxDecompressedBytes) ?? d.maxDecompressedBytes
        maxCompressionRatio = try c.decodeIfPresent(Int.self, forKey: .maxCompressionRatio) ?? d.maxCompressionRatio
        ratioFloorBytes = try c.decodeIfPresent(Int.self, forKey: .ratioFloorBytes) ?? d.ratioFloorBytes
        maxIdempotencyKeyBytes =
            try c.decodeIfPresent(Int.self, forKey: .maxIdempotencyKeyBytes) ?? d.maxIdempotencyKeyBytes
    }

    /// The most a body of `compressedBytes` may inflate to.
    package func inflateBudget(compressedBytes: Int) -> Int {
        let byRatio = max(
            ratioFloorBytes, compressedBytes.multipliedReportingOverflow(by: maxCompressionRatio).partialValue)
        return min(maxDecompressedBytes, byRatio)
    }
}
