/// One decoded document plus where it sat in the body, so its own bytes can be hashed and kept.
package struct DecodedDocument: Sendable, Equatable {
    package var content: DocumentContent
    /// Byte range of this document inside the decoded (decompressed) body.
    package var byteRange: Range<Int>
    /// How many measurement strings could not be parsed (stored as NULL + raw text).
    package var unparsedMeasurements: Int
    /// How many values were dropped as implausible (negative, non-finite, past ``ValueBounds``) or
    /// for an over-long name; they stay in the raw document and are never summed into a figure.
    package var droppedValues: Int

    package init(content: DocumentContent, byteRange: Range<Int>, unparsedMeasurements: Int, droppedValues: Int = 0) {
        self.content = content
        self.byteRange = byteRange
        self.unparsedMeasurements = unparsedMeasurements
        self.droppedValues = droppedValues
    }

    /// The bundle identifier the document claims (metric `metaData` or the first diagnostic's).
    package var bundleIdentifier: String? {
        switch content {
        case .metric(let m): return m.meta.bundleIdentifier
        case .diagnostic(let d): return d.diagnostics.lazy.compactMap(\.meta.bundleIdentifier).first
        }
    }
}
