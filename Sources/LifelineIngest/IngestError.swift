/// Why an upload was refused, for every front door (HTTP answers it with a status code and a JSON
/// body naming ``code``; `lifeline ingest` prints it).
package struct IngestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of a refusal, which decides the HTTP status.
    package enum Kind: String, Sendable, Equatable {
        /// The body or a document is malformed (400).
        case badRequest
        /// A document names another app than the key's (403).
        case forbidden
        /// Over a size or count limit (413).
        case tooLarge
        /// Well-formed JSON that is not a MetricKit document (422).
        case unprocessable
        /// The store cannot take it now; nothing was stored, retry later (503).
        case unavailable
        /// A bug or a corrupt store (500).
        case `internal`
    }

    package var kind: Kind
    /// A stable machine-readable code (`body_too_large`, `malformed_gzip`, `not_metrickit`, …).
    package var code: String
    /// What was wrong, for a person.
    package var message: String

    package init(_ kind: Kind, code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }
}
