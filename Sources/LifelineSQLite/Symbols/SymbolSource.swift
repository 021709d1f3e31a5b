import Foundation
import LifelineAnalysis
import LifelineStorage

/// Symbolicates sample frames at read time (a dSYM uploaded after the crash applies to it; crash
/// groups stay keyed on binary and offset, so they neither split nor merge when symbols arrive).
package struct SymbolSource: Sendable {
    let directory: URL
    let symbolicator: Symbolicator

    /// `frames` (top of stack first) with the symbols of those whose binary has debug symbols in
    /// this database (see ``symbolicate(_:symbolicator:slice:)``).
    func symbolicate(_ frames: [SampleFrame], on connection: Connection) throws(StoreError) -> [SampleFrame] {
        try Symbolication.symbolicate(frames, symbolicator: symbolicator) { (uuid) throws(StoreError) in
            try Database.debugSymbols(uuid: uuid, on: connection).map { symbols in
                (symbols: symbols, file: directory.appendingPathComponent(symbols.uuid).path)
            }
        }
    }
}
