/// Limits applied while decoding; defaults are documented in the README.
package struct DecodeLimits: Sendable, Equatable {
    /// Maximum JSON nesting depth (objects + arrays). Default 512.
    package var maxDepth: Int = 512
    /// Maximum frames in one call-stack tree. Default 100,000.
    package var maxFramesPerTree: Int = 100_000
    /// Maximum length of one JSON string in bytes. Default 1 MiB.
    package var maxStringBytes: Int = 1 << 20
    /// Maximum documents in one array body. Default 1,000.
    package var maxDocuments: Int = 1_000
    /// Maximum frames in all the call-stack trees of one body together. Default 250,000.
    package var maxFramesPerBody: Int = 250_000
    /// Maximum scalar metrics plus histograms in one metric document (Apple's payloads hold ~40). Default 1,024.
    package var maxMetricsPerDocument: Int = 1_024
    /// Maximum scalar metrics plus histograms in all the documents of one body: each becomes a
    /// stored row, so this bounds the storage work one request can buy. Default 32,768.
    package var maxMetricsPerBody: Int = 32_768
    /// Maximum exit-count entries in one metric document (real ones hold ~24). Default 1,024.
    package var maxExitEntriesPerDocument: Int = 1_024
    /// Maximum signpost entries in one metric document. Default 4,096.
    package var maxSignpostsPerDocument: Int = 4_096
    /// Maximum buckets in one histogram. Default 4,096.
    package var maxBucketsPerHistogram: Int = 4_096
    /// Longest metric name (`section.sub.key`), exit reason, signpost name or binary name, in bytes;
    /// a longer one is dropped (counted in ``DecodedDocument/droppedValues``). Default 256.
    /// App states (iOS 27 reports) per document; Apple caps them per app (`hasExceededStateLimit`).
    package var maxStatesPerDocument: Int = 256
    package var maxNameBytes: Int = 256

    package init() {}
}
