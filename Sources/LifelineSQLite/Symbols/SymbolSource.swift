import CSQLite
import Foundation
import LifelineAnalysis
import LifelineStorage
import Logging

/// Symbolicates sample frames at read time (a dSYM uploaded after the crash applies to it; crash
/// groups stay keyed on binary and offset, so they neither split nor merge when symbols arrive).
package struct SymbolSource: Sendable {
    let directory: URL
    let symbolicator: Symbolicator

    /// `frames` (top of stack first) with the symbols of those whose binary has usable debug
    /// symbols in this database (see ``Symbolication/symbolicate(_:symbolicator:slice:)``). A slice
    /// that crashed or timed out the symbolizer is logged and marked unusable in the database
    /// (``recordUnusable(_:of:)``), so no later query asks for it.
    func symbolicate(_ frames: [SampleFrame], on connection: Connection) throws(StoreError) -> [SampleFrame] {
        let (result, failures) = try Symbolication.symbolicate(frames, symbolicator: symbolicator) {
            (uuid) throws(StoreError) in
            try Database.debugSymbols(uuid: uuid, on: connection).map { symbols in
                (symbols: symbols, file: directory.appendingPathComponent(symbols.uuid).path)
            }
        }
        if !failures.isEmpty { Self.recordUnusable(failures, of: connection) }
        return result
    }

    /// Logs each failure and marks its slice unusable. The reader's connection is read-only and
    /// inside its snapshot: the mark is written through a short-lived connection of its own to the
    /// same file (once per failing file; WAL lets it commit beside the snapshot). A mark that
    /// cannot be written is logged; the symbolicator remembers the failure for this process anyway.
    static func recordUnusable(_ failures: [Symbolication.Failure], of reader: Connection) {
        let logger = Logger(label: "lifeline.symbols")
        for failure in failures {
            logger.warning(
                "symbol file unusable: frames of this binary stay unsymbolicated",
                metadata: [
                    "uuid": "\(failure.symbols.uuid)", "app": "\(failure.symbols.app)",
                    "binary": "\(failure.symbols.binaryName)", "reason": "\(failure.reason.rawValue)",
                ])
        }
        guard let name = sqlite3_db_filename(reader.handle, "main") else { return }
        let path = String(cString: name)
        let now = Int64(Date().timeIntervalSince1970)
        do {
            let writer = try Connection(path: path, options: Database.Options())
            defer { writer.close() }
            for failure in failures {
                _ = try Database.markUnusable(
                    uuid: failure.symbols.uuid, uploadedAt: failure.symbols.uploadedAt, reason: failure.reason,
                    at: now, on: writer)
            }
        } catch {
            logger.error("cannot mark symbol files unusable", metadata: ["error": "\(error)"])
        }
    }
}
