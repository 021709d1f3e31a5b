import Foundation

extension LifelineClient {
    /// How long ``receive(_:kind:)`` uploads a batch of diagnostics before returning.
    static let diagnosticUploadWindow: Duration = .seconds(25)

    /// What a MetricKit adapter calls with a delivery (`didReceive`, `pastPayloads`, `pastDiagnosticPayloads`):
    /// keeps every report in the spool, in order, then, for diagnostics, uploads in the foreground for up to
    /// 25 s (the adapter holds a background activity meanwhile) so a crash report leaves at the launch that
    /// delivered it. Returns the reports newly kept; a report the spool cannot write is counted in
    /// ``LifelineCounters/unspooled``.
    @discardableResult
    public func receive(_ reports: [Data], kind: ReportKind) async -> Int {
        var kept = 0
        for report in reports {
            do {
                if case .queued = try submit(report, kind: kind) { kept += 1 }
            } catch {
                noteUnspooled()
            }
        }
        if kind == .diagnostic && kept > 0 && consent == .granted {
            await flush(timeout: Self.diagnosticUploadWindow)
        }
        return kept
    }
}
