import Foundation
import LifelineAnalysis

/// Read-time symbolication shared by the stores: frames of a crash sample turned into function,
/// file and line through a ``Symbolicator``, whatever store holds the slices.
package enum Symbolication {
    /// Offsets past this are load addresses (iOS 14.0.x wrote those), not offsets: left alone.
    static let maxOffset: UInt64 = 1 << 32

    /// A symbol file found unusable by a read: the store records it once (see ``symbolicate(_:symbolicator:slice:)``).
    package struct Failure: Sendable, Equatable {
        package var symbols: DebugSymbols
        package var reason: SymbolFileFailure
    }

    /// `frames` (top of stack first) with the symbols of those whose binary has usable debug
    /// symbols: `slice` gives the recorded slice of an upper-case UUID and the path of its DWARF
    /// file (or nil); a slice marked unusable is skipped; address = the slice's `__TEXT` vmaddr +
    /// offset, minus one for caller frames (return addresses point after the call). Any store: the
    /// lookup is the store's. `failures`: the slices this call found unusable first (crashed or
    /// timed out the symbolizer), for the store to record and log; their other frames stay
    /// unsymbolicated.
    package static func symbolicate<LookupError: Error>(
        _ frames: [SampleFrame], symbolicator: Symbolicator,
        slice lookup: (String) throws(LookupError) -> (symbols: DebugSymbols, file: String)?
    ) throws(LookupError) -> (frames: [SampleFrame], failures: [Failure]) {
        // One lookup (row and file) per binary, not per frame.
        var slices: [String: (symbols: DebugSymbols, file: String)?] = [:]
        var failures: [Failure] = []
        var result = frames
        for index in result.indices {
            guard let uuid = result[index].binaryUUID?.uppercased(), result[index].offset < maxOffset else {
                continue
            }
            if slices[uuid] == nil {
                let found = try lookup(uuid)
                slices[uuid] = .some(
                    found.flatMap {
                        $0.symbols.unusable == nil && FileManager.default.fileExists(atPath: $0.file) ? $0 : nil
                    })
            }
            guard let (slice, file) = slices[uuid] ?? nil else { continue }
            var address = slice.textVMAddress &+ result[index].offset
            if index > 0, address > 0 { address -= 1 }
            switch symbolicator.symbolicate(file: file, version: slice.uploadedAt, address: address) {
            case .symbols(let symbols):
                result[index].symbols = symbols
            case .failed(let reason, let first):
                // The binary's other frames are not asked for.
                slices[uuid] = .some(nil)
                if first { failures.append(Failure(symbols: slice, reason: reason)) }
            }
        }
        return (result, failures)
    }

    /// `title` naming the first symbolicated frame instead of a binary and an offset:
    /// "EXC_BAD_ACCESS / SIGSEGV at Demo +0x4030" → "EXC_BAD_ACCESS / SIGSEGV in Parser.parse(_:) — Parser.swift:42".
    package static func title(_ title: String, frames: [SampleFrame]) -> String {
        guard let symbol = frames.lazy.compactMap({ $0.symbols.first }).first(where: { $0.function != nil }),
            let function = symbol.function
        else { return title }
        let head = title.range(of: " at ", options: .backwards).map { String(title[..<$0.lowerBound]) } ?? title
        var place = ""
        if let file = symbol.file {
            place =
                " — " + (file.split(separator: "/").last.map(String.init) ?? file)
                + (symbol.line.map { ":\($0)" } ?? "")
        }
        return "\(head) in \(function)\(place)"
    }
}
