/// An `MXDiagnosticPayload` (or a bare diagnostic, wrapped, with no timestamps).
package struct DiagnosticPayload: Sendable, Equatable {
    package var begin: Timestamp?
    package var end: Timestamp?
    package var diagnostics: [Diagnostic]
    /// Which format the document was sent in (an iOS 27 report holds one diagnostic).
    package var format: PayloadFormat = .legacy

    package init(begin: Timestamp?, end: Timestamp?, diagnostics: [Diagnostic]) {
        self.begin = begin
        self.end = end
        self.diagnostics = diagnostics
    }
}
