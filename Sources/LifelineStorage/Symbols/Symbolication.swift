import Foundation
import LifelineAnalysis

/// Read-time symbolication shared by the stores: frames of a crash sample turned into function,
/// file and line through a ``Symbolicator``, whatever store holds the slices.
package enum Symbolication {
    /// Offsets past this are load addresses (iOS 14.0.x wrote those), not offsets: left alone.
    static let maxOffset: UInt64 = 1 << 32

    /// `frames` (top of stack first) with the symbols of those whose binary has debug symbols:
    /// `slice` gives the recorded slice of an upper-case UUID and the path of its DWARF file (or
    /// nil); address = the slice's `__TEXT` vmaddr + offset, minus one for caller frames (return
    /// addresses point after the call). Any store: the lookup is the store's.
    package static func symbolicate<Failure: Error>(
        _ frames: [SampleFrame], symbolicator: Symbolicator,
        slice lookup: (String) throws(Failure) -> (symbols: DebugSymbols, file: String)?
    ) throws(Failure) -> [SampleFrame] {
        // One lookup (row and file) per binary, not per frame.
        var slices: [String: (symbols: DebugSymbols, file: String)?] = [:]
        var result = frames
        for index in result.indices {
            guard let uuid = result[index].binaryUUID?.uppercased(), result[index].offset < maxOffset else {
                continue
            }
            if slices[uuid] == nil {
                let found = try lookup(uuid)
                slices[uuid] = .some(found.flatMap { FileManager.default.fileExists(atPath: $0.file) ? $0 : nil })
            }
            guard let (slice, file) = slices[uuid] ?? nil else { continue }
            var address = slice.textVMAddress &+ result[index].offset
            if index > 0, address > 0 { address -= 1 }
            result[index].symbols = symbolicator.symbolicate(file: file, address: address)
        }
        return result
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
